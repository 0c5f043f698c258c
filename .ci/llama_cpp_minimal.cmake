# Loaded by llama-cpp-python's build as CMAKE_PROJECT_llama.cpp_INCLUDE (see Makefile).
# llama-cpp-python forces llama.cpp's `common` library on (53 of the 178 objects it compiles,
# with an HTTP client and JSON parsers among them), but its Python bindings only load libllama
# and libggml*. A normal variable set here shadows the forced cache entry inside llama.cpp's own
# directory scope, so `common` is neither built nor installed.
set(LLAMA_BUILD_COMMON OFF)
