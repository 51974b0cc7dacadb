// Installs the relaxed-SIMD loops (cpp/relaxed) in place of the core's, on every thread. Each
// thread that runs the core's kernels instantiates the relaxed module on the shared memory, with
// a stack of its own, and puts its loops in its own function table (every thread of a wasm
// program has one) at the slots reserved below, which are the same indices in every instance.
// In wasm a function pointer is such an index, and a call through it checks the function's
// type, so a wrong entry traps instead of running with mismatched arguments.

#include "relaxed_kernels.hpp"

#include <emscripten.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/kernel_table.hpp"
#include "parallel/thread_pool.hpp"

namespace {

using namespace attn::detail;

// The loops spill a tile at most (64-byte frames today, llvm-objdump-16 -d of the module).
constexpr size_t kRelaxedStackBytes = 64 * 1024;
constexpr size_t kTableEntries = sizeof(KernelTable) / sizeof(void*);

// A reserved slot of the function table: never called, since a thread fills every slot before
// the kernel table points at them.
template <int Slot, typename Result, typename... Args>
Result reserved_slot(Args...) {
  __builtin_trap();
}

template <int Slot, typename Result, typename... Args>
constexpr auto slot_like(Result (*)(Args...)) {
  return &reserved_slot<Slot, Result, Args...>;
}

KernelTable reserved_slots() {
  KernelTable table{};
#define ATTN_RESERVED_SLOT(member, loop, name) table.member = slot_like<__COUNTER__>(&loop);
  ATTN_KERNEL_VARIANTS(ATTN_RESERVED_SLOT)
#undef ATTN_RESERVED_SLOT
  return table;
}

// Instantiates the relaxed module on this thread and fills this thread's table: the module's
// kernel_table export writes its loops (indices of its own table) into `loops`, and each goes to
// the main module's slot of the same entry. Where the caller compiled the module already
// (Module.attnRelaxedModule: a browser's main thread may not compile over 4 KB synchronously),
// that one is used; pool workers compile it from the bytes in the heap.
EM_JS(void, attn_instantiate_relaxed_loops,
      (const unsigned char* bytes, size_t size, uintptr_t stack_top, const KernelTable* slots,
       KernelTable* loops, size_t entries),
      {
        var module = Module['attnRelaxedModule'] ||
                     new WebAssembly.Module(HEAPU8.slice(bytes, bytes + size));
        var instance = new WebAssembly.Instance(module, {env : {memory : wasmMemory}});
        instance.exports.__stack_pointer.value = stack_top;
        instance.exports.kernel_table(loops);
        var relaxedTable = instance.exports.__indirect_function_table;
        for (var i = 0; i < entries; ++i) {
          wasmTable.set(HEAPU32[(slots >> 2) + i], relaxedTable.get(HEAPU32[(loops >> 2) + i]));
        }
      });

std::vector<unsigned char> relaxed_bytes;

void install_on_this_thread() {
  thread_local std::unique_ptr<unsigned char[]> stack;
  stack = std::make_unique<unsigned char[]>(kRelaxedStackBytes);
  const uintptr_t stack_top = reinterpret_cast<uintptr_t>(stack.get() + kRelaxedStackBytes) & ~15u;
  const KernelTable slots = reserved_slots();
  KernelTable loops{};
  attn_instantiate_relaxed_loops(relaxed_bytes.data(), relaxed_bytes.size(), stack_top, &slots,
                                 &loops, kTableEntries);
}

}  // namespace

namespace binding {

void install_relaxed_kernels(const unsigned char* bytes, size_t size) {
  relaxed_bytes.assign(bytes, bytes + size);
  install_on_this_thread();
  set_worker_setup(&install_on_this_thread);  // thread_pool.hpp: each worker, as it starts
  use_kernel_table(reserved_slots());
}

}  // namespace binding
