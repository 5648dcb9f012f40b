// valijson, included the one way toolmux uses it: with exceptions, so that a
// schema it cannot parse throws instead of printing and calling abort().
// Every file that includes valijson includes it through this header, so its
// inline functions are compiled with the same setting everywhere.
#pragma once

#define VALIJSON_USE_EXCEPTIONS 1
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>
