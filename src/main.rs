use std::os::unix::process::CommandExt;

fn main() {
    short_openmp_spin();
    std::process::exit(zero::cli::main());
}

/// libtorch's OpenMP threads (libgomp) spin while they wait for each other, 300,000 rounds by
/// default. When another program takes a core, a spinning thread holds its core while the thread
/// it waits for sits descheduled, and every operation's barrier waits a time slice; threads that
/// never spin pay a wake-up at every barrier instead. A spin of 10,000 rounds keeps nearly all
/// of the default's speed on an idle machine and little of its cost beside a busy program
/// (docs/decisions.md, "Training threads"). The weights are the same, bit for bit, whatever the
/// spin. libgomp reads it from the environment when it is loaded, before `main`, so the
/// commands that train (the others run libtorch on one thread a caller) start themselves again
/// with it; a policy or spin count the user set is kept, and `./zero` sets it at once.
fn short_openmp_spin() {
    const SPIN: &str = "GOMP_SPINCOUNT";
    const SHORT_SPIN: &str = "10000";
    const TRAINING: [&str; 2] = ["cycle", "train"];
    if std::env::var_os("OMP_WAIT_POLICY").is_some() || std::env::var_os(SPIN).is_some() {
        return;
    }
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let trains = args.get(1).is_some_and(|c| TRAINING.iter().any(|t| c == t));
    let (Ok(exe), Some(arg0), true) = (std::env::current_exe(), args.first(), trains) else {
        return;
    };
    // `exec` returns only when it fails; then this process goes on with spinning threads.
    let error = std::process::Command::new(exe)
        .arg0(arg0)
        .args(&args[1..])
        .env(SPIN, SHORT_SPIN)
        .exec();
    eprintln!("zero: note: could not restart with {SPIN}={SHORT_SPIN} ({error}); continuing");
}
