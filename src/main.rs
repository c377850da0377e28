//! The `sluice` binary; everything lives in the library.

fn main() -> std::process::ExitCode {
    sluice::cli::main()
}
