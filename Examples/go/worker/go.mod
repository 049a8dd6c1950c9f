module outlive.dev/examples/worker

go 1.19

require outlive.dev/outlive v0.0.0

// The binding from this source tree: nothing is downloaded.
replace outlive.dev/outlive => ../../../bindings/go
