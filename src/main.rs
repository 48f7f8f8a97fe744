fn main() -> std::process::ExitCode {
    // Rust ignores SIGPIPE, so printing into a closed pipe (`xpu-workbench inspect F | head`)
    // would panic in println!; the default action ends the process quietly, as Unix tools do.
    #[cfg(unix)]
    // SAFETY: called first thing in main, before any thread exists; SIG_DFL is a valid handler.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    xpu_workbench::cli::main()
}
