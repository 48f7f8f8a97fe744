fn main() -> std::process::ExitCode {
    xpu_workbench::cli::main()
}
