fn main() {
    std::process::exit(zero::cli::main());
}
