//! The `sluice` binary; everything lives in the library.

fn main() -> std::process::ExitCode {
    sluice::run_command_line()
}
