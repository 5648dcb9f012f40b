#include "src/result_store.h"
