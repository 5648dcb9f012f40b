// Unguessable identifiers: session ids, result ids.
#pragma once

#include <cstddef>
#include <string>

namespace toolmux {

// `bytes` random bytes from the kernel (getrandom), as base64url without
// padding. Up to 64 bytes come from a pool each thread refills 256 bytes at a
// time (every byte handed out once; a forked child forgets its copy), more
// straight from the kernel. Throws std::system_error if the kernel gives none.
std::string random_id(std::size_t bytes = 32);

}  // namespace toolmux
