#pragma once
// How many threads the core's parallel kernels use (the calling thread included). Results are
// the same bits whatever the count: every split partitions the outputs.

namespace attn {

// Sets the count; 1 (the default) runs everything on the calling thread. Starts threads - 1
// workers once, replacing the previous ones; not to be called while another thread is inside
// the core. Throws std::invalid_argument naming threads when it is below 1.
void set_threads(int threads);

// The count in use.
int threads();

}  // namespace attn
