use std::os::unix::process::CommandExt;

fn main() {
    passive_openmp();
    std::process::exit(zero::cli::main());
}

/// libtorch's OpenMP threads (libgomp) spin while they wait for each other by default. When
/// another program takes a core, a spinning thread holds its core while the thread it waits
/// for sits descheduled, and every operation's barrier waits a time slice: training on the
/// 2 cores of a shared machine ran 6 times slower than with threads that sleep (60 steps of
/// the cpu preset at load 6: 82-84 s spinning, 13 s sleeping; the same weights, bit for bit).
/// libgomp reads its policy from the environment when it is loaded, before `main`, so the
/// commands that train (the others run libtorch on one thread a caller) start themselves again
/// with `OMP_WAIT_POLICY=PASSIVE`; a policy the user set is kept, and `./zero` sets it at once.
fn passive_openmp() {
    const POLICY: &str = "OMP_WAIT_POLICY";
    const TRAINING: [&str; 2] = ["cycle", "train"];
    if std::env::var_os(POLICY).is_some() {
        return;
    }
    let mut args = std::env::args_os();
    let (Ok(exe), Some(arg0)) = (std::env::current_exe(), args.next()) else {
        return;
    };
    let command = std::env::args_os().nth(1);
    if !TRAINING
        .iter()
        .any(|c| command.as_deref() == Some(c.as_ref()))
    {
        return;
    }
    // `exec` returns only when it fails; then this process goes on with spinning threads.
    let error = std::process::Command::new(exe)
        .arg0(arg0)
        .args(args)
        .env(POLICY, "PASSIVE")
        .exec();
    eprintln!("zero: note: could not restart with {POLICY}=PASSIVE ({error}); continuing");
}
