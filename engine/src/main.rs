use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = loadgate::cli::Cli::parse();
    match loadgate::run(cli) {
        Ok(outcome) => outcome.exit_code(),
        Err(error) => {
            eprintln!("loadgate: error: {}", loadgate::error_message(&error));
            loadgate::error_exit_code(&error)
        }
    }
}
