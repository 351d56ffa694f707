//! What a door's process spends, read from `/proc`.

/// What a process has spent so far, over all its threads.
#[derive(Clone, Copy)]
pub struct Usage {
    user_seconds: f64,
    system_seconds: f64,
    switches: u64,
}

/// What a door spent per call over one run of round trips.
pub struct Cost {
    pub user_micros: f64,
    pub system_micros: f64,
    pub switches: f64,
}

impl Usage {
    /// From `/proc/PID/stat` (user and system time, in clock ticks of
    /// 1/100 s) and each thread's `/proc/PID/task/TID/status`
    /// (voluntary and involuntary context switches).
    pub fn of(pid: u32) -> Usage {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        // The fields after the command's name, which may hold spaces.
        let fields: Vec<&str> = stat.rsplit_once(')').unwrap().1.split_whitespace().collect();
        let ticks = |at: usize| fields[at].parse::<u64>().unwrap() as f64 / 100.0;
        let mut switches = 0;
        for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap().flatten() {
            let Ok(status) = std::fs::read_to_string(task.path().join("status")) else {
                continue; // a thread that just ended
            };
            switches += status
                .lines()
                .filter(|line| line.contains("ctxt_switches:"))
                .filter_map(|line| line.split_whitespace().nth(1)?.parse::<u64>().ok())
                .sum::<u64>();
        }
        Usage {
            user_seconds: ticks(11),
            system_seconds: ticks(12),
            switches,
        }
    }

    /// What was spent since `before`, per call over `calls`.
    pub fn since(self, before: Usage, calls: usize) -> Cost {
        let per_call = |seconds: f64| seconds * 1e6 / calls as f64;
        Cost {
            user_micros: per_call(self.user_seconds - before.user_seconds),
            system_micros: per_call(self.system_seconds - before.system_seconds),
            switches: self.switches.saturating_sub(before.switches) as f64 / calls as f64,
        }
    }
}
