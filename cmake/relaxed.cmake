# Relaxed-SIMD modules: C++ of the core compiled with relaxed SIMD's fused multiply-add, into
# small wasm modules that a SIMD build loads beside itself. emcc 3.1.6 cannot build them
# (docs/relaxed-simd.md): Debian's clang-16 compiles against emscripten's headers and
# wasm-ld-16 links each alone, with no entry point, importing its memory and exporting its stack
# pointer, which the loader points at a stack it allocates in that memory (no stack of its own:
# -z stack-size=0). --strip-all keeps the export names. -mllvm -disable-lsr as emcc passes it to
# its own clang: LLVM's loop strength reduction would rewrite the micro-kernel's addresses b + 16,
# 32, 48 bytes so that the wasm backend no longer folds them into the loads' offsets (three more
# i32.add per depth step, which V8 keeps).

find_program(ATTN_RELAXED_CLANG clang-16 REQUIRED NO_CMAKE_FIND_ROOT_PATH)
find_program(ATTN_RELAXED_WASM_LD wasm-ld-16 REQUIRED NO_CMAKE_FIND_ROOT_PATH)
get_target_property(attn_eigen_include Eigen3::Eigen INTERFACE_INCLUDE_DIRECTORIES)

# attn_relaxed_module(<target> <source> <output .wasm> [ALL] [SHARED_MEMORY]): builds <output>
# from <source>. SHARED_MEMORY for the threaded build: a module must declare its imported memory
# shared exactly when the main module's is, and wasm-ld then wants atomics, bulk memory and the
# main module's maximum (4 GiB) declared.
function(attn_relaxed_module target source output)
  cmake_parse_arguments(PARSE_ARGV 3 arg "ALL;SHARED_MEMORY" "" "")
  set(object ${CMAKE_CURRENT_BINARY_DIR}/${target}.o)
  set(compile_features)
  set(link_memory)
  if(arg_SHARED_MEMORY)
    set(compile_features -matomics)
    set(link_memory --shared-memory --max-memory=4294967296)
  endif()
  add_custom_command(
    OUTPUT ${object}
    COMMAND ${ATTN_RELAXED_CLANG} --target=wasm32-unknown-emscripten -msimd128 -mrelaxed-simd
      -mbulk-memory ${compile_features} -O3 -DNDEBUG -std=c++17 -fno-exceptions -mllvm -disable-lsr
      --sysroot=${EMSCRIPTEN_SYSROOT} -isystem ${EMSCRIPTEN_SYSROOT}/include/compat
      -isystem ${EMSCRIPTEN_SYSROOT}/include/c++/v1 -isystem ${attn_eigen_include}
      -I${CMAKE_CURRENT_SOURCE_DIR}/cpp/src -I${CMAKE_CURRENT_SOURCE_DIR}/cpp/include
      -MD -MF ${object}.d -c ${source} -o ${object}
    DEPENDS ${source}
    DEPFILE ${object}.d
    COMMENT "Compiling ${source} with clang-16 (relaxed SIMD)"
    VERBATIM)
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${ATTN_RELAXED_WASM_LD} --no-entry --import-memory ${link_memory} -z stack-size=0
      --export=__stack_pointer --export-table --strip-all ${object} -o ${output}
    DEPENDS ${object}
    VERBATIM)
  set(all)
  if(arg_ALL)
    set(all ALL)
  endif()
  add_custom_target(${target} ${all} DEPENDS ${output})
endfunction()
