//! The classic BPF the seccomp filters (`seccomp`, `unix_sockets`) are written in: a few
//! instructions, labels, and the returns, which the assembler lays out once each at the end.

/// `AUDIT_ARCH_*` of the native ABI (linux/audit.h), and the x32 bit where there is one.
#[cfg(target_arch = "x86_64")]
pub const ARCH: Option<(u32, Option<u32>)> = Some((0xC000_003E, Some(0x4000_0000)));
#[cfg(target_arch = "aarch64")]
pub const ARCH: Option<(u32, Option<u32>)> = Some((0xC000_00B7, None));
#[cfg(target_arch = "riscv64")]
pub const ARCH: Option<(u32, Option<u32>)> = Some((0xC000_00F3, None));
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
)))]
pub const ARCH: Option<(u32, Option<u32>)> = None;

/// Offsets in `struct seccomp_data`: nr, arch, then args[6] as u64.
const OFF_NR: u32 = 0;
const OFF_ARCH: u32 = 4;

/// The low half of argument `i` (these architectures are little-endian; the kernel reads a
/// socket family, an ioctl request and the namespace flags as 32 bits anyway).
pub fn arg(i: u32) -> u32 {
    16 + 8 * i
}

/// The high half of argument `i`.
pub fn arg_high(i: u32) -> u32 {
    arg(i) + 4
}

/// How the filter answers a system call.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Ret {
    Allow,
    /// Hand it to the run's init (`SECCOMP_RET_USER_NOTIF`, see `connect_broker`).
    Notify,
    Errno(i32),
}

impl Ret {
    fn value(self) -> u32 {
        match self {
            Ret::Allow => libc::SECCOMP_RET_ALLOW,
            Ret::Notify => libc::SECCOMP_RET_USER_NOTIF,
            Ret::Errno(e) => libc::SECCOMP_RET_ERRNO | (e as u32 & libc::SECCOMP_RET_DATA),
        }
    }
}

/// Where a jump goes.
#[derive(Clone, Copy)]
pub enum To {
    Next,
    Label(usize),
    Ret(Ret),
}

/// One line of a program before assembly.
pub enum Op {
    Stmt(u32, u32),
    Jump(u32, u32, To, To),
    Label(usize),
}

/// Load the word at `off` of `struct seccomp_data`.
pub fn ld(off: u32) -> Op {
    Op::Stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, off)
}

pub fn jeq(k: u32, t: To, f: To) -> Op {
    Op::Jump(libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K, k, t, f)
}

pub fn jset(k: u32, t: To, f: To) -> Op {
    Op::Jump(libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K, k, t, f)
}

/// Every filter's start: a call of another ABI (another architecture, or x32 with `x32_bit`)
/// goes to `wrong`, as its numbers differ; then the call's number is loaded.
pub fn head(arch: u32, x32_bit: Option<u32>, wrong: Ret) -> Vec<Op> {
    let mut code = vec![
        ld(OFF_ARCH),
        jeq(arch, To::Next, To::Ret(wrong)),
        ld(OFF_NR),
    ];
    if let Some(bit) = x32_bit {
        let jge = libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K;
        code.push(Op::Jump(jge, bit, To::Ret(wrong), To::Next));
    }
    code
}

/// Resolve labels and returns into jump offsets; the returns go at the end, once each.
pub fn assemble(code: &[Op]) -> Vec<libc::sock_filter> {
    let mut labels = std::collections::HashMap::new();
    let mut n = 0usize;
    let mut rets: Vec<Ret> = Vec::new();
    for op in code {
        match op {
            Op::Label(l) => _ = labels.insert(*l, n),
            Op::Stmt(..) => n += 1,
            Op::Jump(_, _, t, f) => {
                n += 1;
                for to in [t, f] {
                    if let To::Ret(r) = to
                        && !rets.contains(r)
                    {
                        rets.push(*r);
                    }
                }
            }
        }
    }
    let target = |to: To, here: usize| -> u8 {
        let at = match to {
            To::Next => here + 1,
            To::Label(l) => labels[&l],
            To::Ret(r) => n + rets.iter().position(|x| *x == r).expect("collected above"),
        };
        u8::try_from(at - here - 1).expect("a BPF jump reaches at most 255 ahead")
    };
    let insn = |code: u32, jt, jf, k| libc::sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    };
    let mut out = Vec::new();
    for op in code {
        let here = out.len();
        match *op {
            Op::Label(_) => {}
            Op::Stmt(c, k) => out.push(insn(c, 0, 0, k)),
            Op::Jump(c, k, t, f) => out.push(insn(c, target(t, here), target(f, here), k)),
        }
    }
    let ret = libc::BPF_RET | libc::BPF_K;
    out.extend(rets.iter().map(|r| insn(ret, 0, 0, r.value())));
    out
}

/// Runs `p` as the kernel would on one call of the ABI `arch` (number `nr`, arguments
/// `args`): the return.
#[cfg(test)]
pub fn verdict(p: &[libc::sock_filter], arch: u32, nr: u32, args: [u64; 6]) -> u32 {
    let mut data = vec![nr, arch];
    data.extend([0, 0]); // instruction pointer
    for a in args {
        data.extend([a as u32, (a >> 32) as u32]);
    }
    let (mut pc, mut acc) = (0usize, 0u32);
    loop {
        let i = p[pc];
        let class = u32::from(i.code) & 0x07;
        if class == libc::BPF_RET {
            return i.k;
        }
        if class == libc::BPF_LD {
            acc = data[i.k as usize / 4];
            pc += 1;
            continue;
        }
        if class == libc::BPF_ALU {
            assert_eq!(u32::from(i.code) & 0xf0, libc::BPF_AND);
            acc &= i.k;
            pc += 1;
            continue;
        }
        let hit = match u32::from(i.code) & 0xf0 {
            libc::BPF_JEQ => acc == i.k,
            libc::BPF_JSET => acc & i.k != 0,
            libc::BPF_JGE => acc >= i.k,
            op => panic!("unexpected jump {op:#x}"),
        };
        pc += 1 + usize::from(if hit { i.jt } else { i.jf });
    }
}
