fn main() {
    std::process::exit(skillpipe::cli::main());
}
