// The query expansion tool search uses unless a catalog turns it off: general
// software, API and command-line vocabulary, so that a query's everyday word
// also matches the word tool definitions use ("remove" -> delete, "repo" ->
// repository, "k8s" -> kubernetes, "sms" -> message).
//
// It was written from general knowledge of how APIs and CLIs name things, not
// from the queries of the search-quality benchmark (bench/search_quality/).
// It is compiled in: nothing is read at run time.
#pragma once

#include "catalog/text_analysis.h"

namespace toolmux {

// Lower-case query word -> the words it also matches. Built once, on first
// use; safe to call from any thread.
const SynonymMap& default_synonyms();

}  // namespace toolmux
