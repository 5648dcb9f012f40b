// Where the call pipeline writes down calls: the journal of mutations and the
// audit trail (src/store/journal_store.h), shared by the replay, journal and
// record stages. Plain data; the store is thread-safe.
#pragma once

#include <memory>
#include <string>

#include "src/store/journal_store.h"

namespace toolmux {

struct CallJournal {
  // Null when journaling is off (serve --no-journal) or the store could not
  // be opened.
  std::shared_ptr<JournalStore> store;
  // Why the store could not be opened ("" = it is open, or journaling is off
  // by choice). While set, a call that would be journaled does not run.
  std::string unavailable;
};

}  // namespace toolmux
