// The audit trail's hash chain (issue 31): in RocksDB each audit record, as
// stored, carries its place in its slot's chain (chain_seq: 0, 1, 2, ... in
// the order the records were appended) and the BLAKE2b-256 (hex) of the stored
// bytes of the record before it (chain_prev; kAuditChainGenesis for the
// first). Editing a record's bytes breaks the next record's link; deleting one
// leaves a gap in chain_seq. Retention removes only a whole prefix of the
// chain and leaves a retention marker, signed with HMAC-SHA-256 under a key
// derived from the data directory's state key (src/store/state_key.h), that
// says what it removed and the hash of the last removed record, so that the
// chain goes on across it and a forged or edited marker is found.
//
// What a hash chain cannot show: the newest records removed from the end, or
// the whole chain rebuilt by someone who can write the database (the hashes
// need no key). The signed marker keeps retention from being used to hide a
// removal in the middle.
//
// Records written before the chain (by a toolmux that kept none) have no
// link: verify counts them as unchained, never as tampered.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "src/base/sealed_box.h"
#include "src/base/status.h"

namespace toolmux {

// The chain_prev of a chain's first record.
inline constexpr std::string_view kAuditChainGenesis =
    "0000000000000000000000000000000000000000000000000000000000000000";

// What a verify says of records written before the chain.
inline constexpr std::string_view kUnchainedNote =
    "written before the audit chain: toolmux 0.1.0 and earlier";

// A record's place in its chain.
struct AuditChainLink {
  std::uint64_t seq = 0;
  std::string prev;  // BLAKE2b-256 (hex) of the previous record's stored bytes
};

// An audit record's JSON text (audit_text) with its link added as the
// members chain_prev and chain_seq, at the end.
std::string chained_audit_text(std::string record_text, const AuditChainLink& link);
// The link of a stored record; nullopt when it has none (written before the
// chain) or is not a JSON object.
std::optional<AuditChainLink> audit_chain_link(std::string_view stored);
// The hash the next record's chain_prev must hold.
std::string audit_chain_hash(std::string_view stored);

// What one retention (or several in a row, merged) removed from the front of
// a chain.
struct RetentionMarker {
  std::uint64_t first_seq = 0;   // chain_seq of the first record removed
  std::uint64_t last_seq = 0;    // and of the last
  std::uint64_t removed = 0;     // how many: last_seq - first_seq + 1
  std::int64_t earliest_ns = 0;  // the earliest time among them (ns since the epoch)
  std::int64_t latest_ns = 0;    // and the latest
  std::string prev;              // the first removed record's chain_prev
  std::string last_hash;         // audit_chain_hash of the last removed record
  std::int64_t written_ns = 0;   // when the retention ran
};

// The key retention markers are signed with: derived from the state key, so
// that it signs nothing else.
std::string retention_marker_key(const SealingKey& state_key);
// The marker as stored: JSON with its members and "mac", the HMAC-SHA-256
// (hex) under `marker_key` of its JSON text without "mac".
std::string signed_marker_text(const RetentionMarker& marker, const std::string& marker_key);
// The marker in `stored`: invalid_argument "not a retention marker" when it
// cannot be read, "its signature does not match" when its mac is not the one
// `marker_key` gives (edited, or made without the key).
Result<RetentionMarker> marker_from_text(std::string_view stored, const std::string& marker_key);

// Where verify found the chain broken.
struct AuditChainProblem {
  std::string where;      // the slot folder
  std::uint64_t seq = 0;  // the chain_seq of the record (or marker's first) that does not fit
  std::optional<std::chrono::system_clock::time_point> time;  // that record's, when known
  std::string call_id;  // "" when not known (a record that is gone)
  std::string why;  // "hash mismatch: ...", "missing predecessor: ...", "marker signature bad: ..."
};

// What `toolmux audit verify` found.
struct AuditChainReport {
  std::size_t records = 0;    // chained records checked
  std::size_t unchained = 0;  // records without a link (kUnchainedNote)
  std::size_t markers = 0;    // retention markers checked
  std::uint64_t removed = 0;  // records they say retention removed
  std::size_t chains = 0;     // slots with a chain
  // The times of the first and the last record, over every chain.
  std::optional<std::chrono::system_clock::time_point> first;
  std::optional<std::chrono::system_clock::time_point> last;
  std::optional<AuditChainProblem> problem;  // the first record that does not fit
};

// Walks the chain of every journal slot of `data_dir` (opened read-only,
// beside a running server; nothing is written), checking each link and
// marker, and stops at the first record that does not fit. The markers are
// checked with the state key in data_dir (never made here; a marker with no
// key to check it by is a problem). io_error when a slot cannot be read.
Result<AuditChainReport> verify_audit_chain(const std::filesystem::path& data_dir);

}  // namespace toolmux
