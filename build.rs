//! Link options of the `portcullis` binary (not of the tests or the other crates' targets).
//!
//! Relative relocations packed (`DT_RELR`): a position-independent executable carries one
//! relocation for every pointer in its read-only data (vtables, panic locations, string tables),
//! and the dynamic loader reads them all at every start. As `Elf64_Rela` records that table is
//! megabytes, read once and left resident in every process; packed, it is a bitmap a few hundred
//! times smaller. glibc loads such binaries since 2.36 (an older one refuses with a version
//! error naming `GLIBC_ABI_DT_RELR`), GNU ld writes them since 2.38 and ignores the option, with a
//! warning, before. docs/limits.md ("Memory") has the figures.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo::rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
