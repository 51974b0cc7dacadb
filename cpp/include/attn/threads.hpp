#pragma once
// How many threads the core's parallel kernels use (the calling thread included). Results are
// the same bits whatever the count: every split partitions the outputs.
//
// Any number of threads may call the core at once, each call as correct as if it ran alone. The
// pool runs one caller's parallel region at a time; a call that finds it busy runs that region
// on its own thread instead of waiting (the same bits), so concurrent callers never block on
// each other. Objects (a model, a KV cache) are not shared between threads without a lock of
// the caller's, as with any C++ object: concurrent calls on one object are the caller's race.

namespace attn {

// Sets the count; 1 (the default) runs everything on the calling thread. Starts threads - 1
// workers once, replacing the previous ones; not to be called while another thread is inside
// the core. Throws std::invalid_argument naming threads when it is below 1.
void set_threads(int threads);

// The count in use.
int threads();

}  // namespace attn
