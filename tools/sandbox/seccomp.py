"""The seccomp filter of the sandbox, compiled on the host with libseccomp (`pyseccomp`).

The runner installs the compiled BPF program itself, after its trusted set-up and before the
user's code: installing it through `bwrap --seccomp` would apply it before bubblewrap execs the
runner, and the filter denies `execve`. What it denies (EPERM unless noted), on top of the
namespaces and rlimits:

- new processes and programs: `fork`, `vfork`, `clone` without `CLONE_THREAD` (threads stay
  allowed), `clone3` (ENOSYS, so the C library falls back to `clone`, which the rule above sees),
  `execve`, `execveat`;
- namespace and mount manipulation: `unshare`, `setns`, `mount`, `umount2`, `pivot_root`,
  `chroot`, `open_tree`, `move_mount`, `fsopen`, `fsmount`, `fsconfig`;
- kernel attack surface a data function never needs: `ptrace`, `process_vm_readv`,
  `process_vm_writev`, `bpf`, `perf_event_open`, `userfaultfd`, `keyctl`, `add_key`,
  `request_key`, `io_uring_setup`, `io_uring_enter`, `io_uring_register`, `kexec_load`,
  `init_module`, `finit_module`, `delete_module`, `personality`, `syslog`, `acct`, `swapon`,
  `swapoff`, `reboot`, `quotactl`;
- sockets of any family but `AF_UNIX` (EAFNOSUPPORT): the network namespace already has no
  route out, and this also closes the kernel's other socket families (netlink, packet, ...)
  to the user's code; `AF_UNIX` stays for the runtime's own use.
System calls of other architectures (e.g. the x32 / i386 ABIs) kill the process
(libseccomp's default for foreign architectures).
"""

from __future__ import annotations

import errno
import os
import socket
import tempfile
from functools import lru_cache

from tools.sandbox.errors import SandboxUnavailable

CLONE_THREAD = 0x00010000

DENIED = (
    "fork",
    "vfork",
    "execve",
    "execveat",
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsmount",
    "fsconfig",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "keyctl",
    "add_key",
    "request_key",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "kexec_load",
    "init_module",
    "finit_module",
    "delete_module",
    "personality",
    "syslog",
    "acct",
    "swapon",
    "swapoff",
    "reboot",
    "quotactl",
)


@lru_cache(maxsize=1)
def compiled_filter() -> bytes:
    """The filter as a raw BPF program (an array of `struct sock_filter`), built once."""
    try:
        import pyseccomp as seccomp
    except (ImportError, RuntimeError) as exc:
        raise SandboxUnavailable(
            f"the sandbox's seccomp filter cannot be built ({exc}); install libseccomp "
            "(apt-get install -y libseccomp2) and the pyseccomp package (pip install pyseccomp)"
        ) from exc
    rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    deny = seccomp.ERRNO(errno.EPERM)
    for name in DENIED:
        if seccomp.resolve_syscall(seccomp.Arch.NATIVE, name) < 0:
            continue  # not a system call of this architecture / libseccomp version
        rules.add_rule(deny, name)
    rules.add_rule(deny, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, CLONE_THREAD, 0))
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    rules.add_rule(
        seccomp.ERRNO(errno.EAFNOSUPPORT), "socket", seccomp.Arg(0, seccomp.NE, socket.AF_UNIX)
    )
    with tempfile.TemporaryFile() as handle:
        rules.export_bpf(handle)
        handle.flush()
        os.lseek(handle.fileno(), 0, os.SEEK_SET)
        program = handle.read()
    if not program or len(program) % 8:
        raise SandboxUnavailable("libseccomp produced no usable filter program")
    return program
