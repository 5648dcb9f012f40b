// policy.confirm: which calls need a human's confirmation, and which rule says so.
#include "catalog/confirm_policy.h"

#include <catch2/catch.hpp>

using namespace toolmux;

TEST_CASE("by default destructive and remote_mutation tools need confirmation, by class") {
  ConfirmPolicy policy;
  CHECK(policy.rule_for("local", "delete_file", SideEffect::destructive) ==
        "/policy/confirm/classes");
  CHECK(policy.rule_for("local", "send_mail", SideEffect::remote_mutation) ==
        "/policy/confirm/classes");
  CHECK_FALSE(policy.rule_for("local", "write_note", SideEffect::local_mutation));
  CHECK_FALSE(policy.rule_for("local", "read_text_file", SideEffect::read_only));
}

TEST_CASE("tool patterns decide before classes, and a yes wins over a no") {
  ConfirmPolicy policy;
  policy.rule.tools["write_*"] = true;
  policy.rule.tools["send_*"] = false;
  policy.rule.tools["send_invoice"] = true;
  CHECK(policy.rule_for("local", "write_note", SideEffect::local_mutation) ==
        "/policy/confirm/tools/write_*");
  CHECK_FALSE(policy.rule_for("local", "send_mail", SideEffect::remote_mutation));
  CHECK(policy.rule_for("local", "send_invoice", SideEffect::remote_mutation) ==
        "/policy/confirm/tools/send_invoice");
}

TEST_CASE("a principal's own rule comes first, its classes replacing the top-level ones") {
  ConfirmPolicy policy;
  policy.rule.tools["deploy"] = true;
  ConfirmRule ci;
  ci.classes = std::set<SideEffect>{SideEffect::destructive};
  ci.tools["deploy"] = false;
  policy.principals["ci"] = ci;
  // ci's own "no" decides for deploy; its classes leave remote_mutation alone.
  CHECK_FALSE(policy.rule_for("ci", "deploy", SideEffect::remote_mutation));
  CHECK_FALSE(policy.rule_for("ci", "send_mail", SideEffect::remote_mutation));
  CHECK(policy.rule_for("ci", "drop_table", SideEffect::destructive) ==
        "/policy/confirm/principals/ci/classes");
  // Everyone else keeps the top-level rule.
  CHECK(policy.rule_for("alice", "deploy", SideEffect::remote_mutation) ==
        "/policy/confirm/tools/deploy");
  CHECK(policy.rule_for("alice", "send_mail", SideEffect::remote_mutation) ==
        "/policy/confirm/classes");
}

TEST_CASE("an empty class list turns confirmation off except where a tool pattern asks") {
  ConfirmPolicy policy;
  policy.rule.classes = std::set<SideEffect>{};
  policy.rule.tools["rm_*"] = true;
  CHECK_FALSE(policy.rule_for("local", "drop_table", SideEffect::destructive));
  CHECK(policy.rule_for("local", "rm_rf", SideEffect::destructive) == "/policy/confirm/tools/rm_*");
}
