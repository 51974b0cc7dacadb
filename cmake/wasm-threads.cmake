# The threaded build (ATTN_WASM_THREADS=ON, scripts/build-wasm.sh): the same module on a shared
# memory, with the core's thread pool (cpp/src/parallel) on pthreads, i.e. Web Workers in a
# browser and worker_threads in Node.

# emscripten 3.1.6's libunwind defines the landing-pad context of -fwasm-exceptions as
# thread_local, while Debian's clang-14 addresses it in the landing pads as a plain global: under
# -pthread a typed catch then never matches, and every core error would escape as an opaque
# WebAssembly.Exception. The same file with the context as a plain global fixes it; that context
# is then shared by all threads, which holds because only the calling thread ever throws (no
# parallel region throws: arguments are checked before the fork).
enable_language(C)
set(attn_unwind_source ${EMSCRIPTEN_ROOT_PATH}/system/lib/libunwind/src/Unwind-wasm.c)
file(READ ${attn_unwind_source} attn_unwind_text)
set(attn_unwind_context "thread_local struct _Unwind_LandingPadContext __wasm_lpad_context;")
string(FIND "${attn_unwind_text}" "${attn_unwind_context}" attn_unwind_found)
if(attn_unwind_found EQUAL -1)
  message(FATAL_ERROR "${attn_unwind_source} no longer declares '${attn_unwind_context}': "
                      "check whether the typed-catch fix is still needed")
endif()
string(REPLACE "${attn_unwind_context}" "struct _Unwind_LandingPadContext __wasm_lpad_context;"
               attn_unwind_text "${attn_unwind_text}")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/unwind-wasm-shared-context.c "${attn_unwind_text}")
add_library(attn_unwind_fix OBJECT ${CMAKE_CURRENT_BINARY_DIR}/unwind-wasm-shared-context.c)
get_filename_component(attn_unwind_dir ${attn_unwind_source} DIRECTORY)
target_include_directories(attn_unwind_fix PRIVATE ${attn_unwind_dir} ${attn_unwind_dir}/../include)
target_compile_definitions(attn_unwind_fix PRIVATE __USING_WASM_EXCEPTIONS__
                                                   _LIBUNWIND_DISABLE_VISIBILITY_ANNOTATIONS)
target_compile_options(attn_unwind_fix PRIVATE -pthread -fwasm-exceptions)
target_sources(attn_wasm PRIVATE $<TARGET_OBJECTS:attn_unwind_fix>)

target_link_options(attn_wasm PRIVATE
  -pthread
  # Pool workers made while the factory loads (web/lib passes threads - 1), so that the core's
  # pool starts its threads inside a call without yielding to the event loop.
  -sPTHREAD_POOL_SIZE=Module.attnPoolSize
  -sPTHREAD_POOL_SIZE_STRICT=2  # more threads than workers fails with EAGAIN, never hangs
  # Without it the glue starts workers with new Worker(new URL('….worker.js', import.meta.url)),
  # which bundlers (Vite) take for a module worker to bundle, CommonJS and all; web/lib passes
  # locateFile for the worker script instead.
  -sUSE_ES6_IMPORT_META=0
  # Growing a shared memory leaves other threads' JS views short: web/lib/heap.js checks them.
  -Wno-pthreads-mem-growth
)
