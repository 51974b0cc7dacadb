# The WebAssembly module: the core plus the one embind file, as an ES module factory.
# Configured twice by scripts/build-wasm.sh: ATTN_SIMD=ON (-msimd128) and ATTN_SIMD=OFF.

set(attn_wasm_compile_flags
  -fwasm-exceptions  # the core throws std::invalid_argument; the bindings turn it into a JS error
)
if(ATTN_SIMD)
  list(APPEND attn_wasm_compile_flags -msimd128)  # SIMD128 intrinsics and autovectorisation
endif()
if(ATTN_WASM_THREADS)
  list(APPEND attn_wasm_compile_flags -pthread)  # a shared memory, atomics, the pool on pthreads
endif()
target_compile_options(attn PUBLIC ${attn_wasm_compile_flags})

set(ATTN_WASM_NAME "attention" CACHE STRING "Base name of the .mjs/.wasm pair")
if(ATTN_SIMD)
  # The loops of the matrix products with fused multiply-add, loaded by web/lib/relaxed.js.
  include(cmake/relaxed.cmake)
  set(attn_relaxed_memory)
  if(ATTN_WASM_THREADS)
    set(attn_relaxed_memory SHARED_MEMORY)
  endif()
  attn_relaxed_module(attn_relaxed ${CMAKE_CURRENT_SOURCE_DIR}/cpp/relaxed/relaxed_loops.cpp
    ${CMAKE_CURRENT_BINARY_DIR}/${ATTN_WASM_NAME}-relaxed.wasm ALL ${attn_relaxed_memory})
endif()

# What the glue's Node paths find as require and __dirname (see each file).
if(ATTN_WASM_THREADS)
  set(attn_glue_prelude ${CMAKE_CURRENT_SOURCE_DIR}/cmake/glue-prelude-threads.js)
else()
  set(attn_glue_prelude ${CMAKE_CURRENT_SOURCE_DIR}/cmake/glue-prelude.js)
endif()

add_executable(attn_wasm cpp/bindings/embind.cpp cpp/bindings/models.cpp
  cpp/bindings/kernel_table.cpp cpp/bindings/relaxed_kernels.cpp cpp/bindings/rotary.cpp)
target_include_directories(attn_wasm PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/cpp/src)
set_target_properties(attn_wasm PROPERTIES OUTPUT_NAME ${ATTN_WASM_NAME} SUFFIX ".mjs")
target_link_libraries(attn_wasm PRIVATE attn::attn)
target_link_options(attn_wasm PRIVATE
  -lembind
  -fwasm-exceptions           # must match the compile flag
  -sMODULARIZE=1              # a factory per load, no globals
  -sEXPORT_ES6=1              # import it as an ES module
  -sEXPORT_NAME=createAttentionModule
  -sENVIRONMENT=web,worker,node
  -sDYNAMIC_EXECUTION=0       # no eval/new Function: the page runs under a strict CSP
  -sFILESYSTEM=0              # nothing here reads files; saves ~20 KB of glue
  -sALLOW_MEMORY_GROWTH=1     # attention over long sequences needs more than the initial heap
  -sMAXIMUM_MEMORY=4GB        # the whole 32-bit address space
  -sNODEJS_CATCH_EXIT=0       # a library must not install process-wide handlers in Node
  -sNODEJS_CATCH_REJECTION=0
  -sEXPORTED_FUNCTIONS=_malloc,_free
  -sINCOMING_MODULE_JS_API=wasmBinary,locateFile
  --extern-pre-js=${attn_glue_prelude}
)
set_property(TARGET attn_wasm APPEND PROPERTY LINK_DEPENDS ${attn_glue_prelude})
if(ATTN_WASM_THREADS)
  include(cmake/wasm-threads.cmake)
endif()

# The Catch2 micro-kernel test (tests/cpp/test_microkernels.cpp) as a node program, for the wasm
# build this directory holds (SIMD or scalar kernels): scripts/test-wasm-microkernels.sh builds
# and runs it. Not part of `all`, so that building the package never waits for it.
find_path(ATTN_CATCH2_INCLUDE catch2/catch.hpp PATHS /usr/include /usr/local/include
  NO_CMAKE_FIND_ROOT_PATH)
if(ATTN_CATCH2_INCLUDE)
  # Catch2 2 is header-only; its CMake target would put the host's /usr/include on the path,
  # where glibc's headers would shadow emscripten's libc, so only catch2/ is linked in.
  set(attn_catch2_dir ${CMAKE_CURRENT_BINARY_DIR}/catch2-include)
  file(MAKE_DIRECTORY ${attn_catch2_dir})
  file(CREATE_LINK ${ATTN_CATCH2_INCLUDE}/catch2 ${attn_catch2_dir}/catch2 SYMBOLIC)
  add_executable(test_microkernels EXCLUDE_FROM_ALL
    tests/cpp/test_microkernels.cpp tests/cpp/main.cpp)
  # Catch2's runner unoptimised, as in the native builds (tests/cpp/CMakeLists.txt).
  set_source_files_properties(tests/cpp/main.cpp PROPERTIES COMPILE_OPTIONS -O0)
  target_link_libraries(test_microkernels PRIVATE attn::attn)
  # The kernels as the library compiled them: cpp/src, and the scalar build's define.
  target_include_directories(test_microkernels PRIVATE ${attn_catch2_dir}
    ${CMAKE_CURRENT_SOURCE_DIR}/cpp/src)
  target_compile_definitions(test_microkernels PRIVATE
    $<TARGET_PROPERTY:attn,COMPILE_DEFINITIONS>)
  # .cjs: emcc's node glue is CommonJS, and package.json makes .js files ES modules.
  set_target_properties(test_microkernels PROPERTIES SUFFIX ".cjs")
  if(ATTN_SIMD)
    # The same tests on the relaxed-SIMD loops, when ATTN_RELAXED_MODULE names the module.
    target_sources(test_microkernels PRIVATE tests/cpp/relaxed_setup.cpp
      cpp/bindings/relaxed_kernels.cpp)
    target_include_directories(test_microkernels PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/cpp/bindings)
  endif()
  target_link_options(test_microkernels PRIVATE
    -fwasm-exceptions        # Catch2's REQUIRE throws, as the library does
    -sENVIRONMENT=node
    -sSINGLE_FILE=1          # the wasm inlined: Node 20's fetch cannot read a file path
    -sEXIT_RUNTIME=1         # main's return value becomes the process's exit code
    -sALLOW_MEMORY_GROWTH=1
  )
endif()
