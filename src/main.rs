#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    render_blueprint::cli::main()
}
