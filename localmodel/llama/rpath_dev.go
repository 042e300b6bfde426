//go:build llamacpp && !llamarelease

package llama

// Builds in this repository (make, go test) also find the libraries in the
// dev folder, wherever the binary is. Release builds (scripts/build-llm.sh,
// tag llamarelease) have only $ORIGIN/../lib: no path of the build machine.

/*
#cgo linux,amd64 LDFLAGS: -Wl,-rpath,${SRCDIR}/../../third_party/llama/linux-x64/lib
#cgo linux,arm64 LDFLAGS: -Wl,-rpath,${SRCDIR}/../../third_party/llama/linux-arm64/lib
*/
import "C"
