// Unguessable identifiers: session ids, result ids.
#pragma once

#include <cstddef>
#include <string>

namespace toolmux {

// `bytes` random bytes from the kernel (getrandom), as base64url without
// padding. Throws std::system_error if the kernel gives none.
std::string random_id(std::size_t bytes = 32);

}  // namespace toolmux
