package ptx

// The test kernels in testdata/*.cu are compiled to the committed .ptx files
// with clang-14; TestPTXUpToDate checks the committed text is current.
//go:generate sh -c "for f in testdata/*.cu; do clang-14 --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch=sm_80 -O3 -S -o ${f%.cu}.ptx $f; done"
