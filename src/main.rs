fn main() {
    std::process::exit(skillpipe::cli_main());
}
