// Compiles the BPF dispatcher and generates its skeleton and the Rust side of `intf.h`.
fn main() {
    scx_cargo::BpfBuilder::new()
        .expect("clang (clang-19) is needed to build the BPF part: run tools/bootstrap.sh")
        .enable_intf("src/bpf/intf.h", "bpf_intf.rs")
        .enable_skel("src/bpf/main.bpf.c", "bpf")
        .build()
        .expect("building the BPF dispatcher failed");
}
