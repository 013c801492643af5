#include "gtest/gtest.h"
#include "tests/infer_test_util.h"
