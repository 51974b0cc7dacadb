# The WebAssembly module: the core plus the one embind file, as an ES module factory.
# Configured twice by scripts/build-wasm.sh: ATTN_SIMD=ON (-msimd128) and ATTN_SIMD=OFF.

set(attn_wasm_compile_flags
  -fwasm-exceptions  # the core throws std::invalid_argument; the bindings turn it into a JS error
)
if(ATTN_SIMD)
  list(APPEND attn_wasm_compile_flags -msimd128)  # SIMD128 intrinsics and autovectorisation
endif()
target_compile_options(attn PUBLIC ${attn_wasm_compile_flags})

set(ATTN_WASM_NAME "attention" CACHE STRING "Base name of the .mjs/.wasm pair")

add_executable(attn_wasm cpp/bindings/embind.cpp cpp/bindings/models.cpp)
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
  --extern-pre-js=${CMAKE_CURRENT_SOURCE_DIR}/cmake/glue-prelude.js
)
set_property(TARGET attn_wasm APPEND PROPERTY LINK_DEPENDS
  ${CMAKE_CURRENT_SOURCE_DIR}/cmake/glue-prelude.js)
