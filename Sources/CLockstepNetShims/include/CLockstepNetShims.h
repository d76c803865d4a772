#ifndef LOCKSTEP_NET_SHIMS_H
#define LOCKSTEP_NET_SHIMS_H

#include <poll.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

/// Socket calls Swift cannot make directly: control-message macros (CMSG_*), ppoll, eventfd, timerfd
/// and prctl. Every function is prefixed `lockstep_net_`; each returns -1 and leaves errno set on failure.

/// Asks the kernel to stamp every datagram received on `fd` (SO_TIMESTAMPNS, CLOCK_REALTIME).
int lockstep_net_enable_receive_timestamps(int fd);

/// Receives one datagram without blocking (MSG_DONTWAIT).
///
/// Returns the datagram's full length (which exceeds `capacity` when it was truncated; then only
/// `capacity` bytes are stored), or -1 with errno (EAGAIN when nothing is waiting).
/// `*kernel_realtime_ns` is the kernel receive time on CLOCK_REALTIME, or -1 when the datagram
/// carried none.
ssize_t lockstep_net_receive(int fd, void *buffer, size_t capacity, struct sockaddr_storage *from,
                             socklen_t *from_length, int64_t *kernel_realtime_ns);

/// Waits for `fds` like ppoll(2): `timeout_ns` < 0 waits forever. Returns the number of ready
/// descriptors, 0 on timeout, -1 with errno (EINTR is returned as 0).
int lockstep_net_wait(struct pollfd *fds, nfds_t count, int64_t timeout_ns);

/// A non-blocking, close-on-exec eventfd used to wake a thread waiting in `lockstep_net_wait`.
int lockstep_net_eventfd(void);
/// Makes the eventfd readable.
int lockstep_net_eventfd_signal(int fd);
/// Makes the eventfd unreadable again.
void lockstep_net_eventfd_drain(int fd);

/// A non-blocking, close-on-exec timerfd on CLOCK_MONOTONIC.
int lockstep_net_timerfd(void);
/// Arms the timer to fire when CLOCK_MONOTONIC reaches `monotonic_ns` (absolute, TFD_TIMER_ABSTIME);
/// a value <= 0 disarms it.
int lockstep_net_timerfd_arm(int fd, int64_t monotonic_ns);
/// Consumes the timer's expirations so it stops being readable.
void lockstep_net_timerfd_drain(int fd);

/// Sets the calling thread's timer slack (PR_SET_TIMERSLACK) so its sleeps end on time.
int lockstep_net_set_timer_slack(unsigned long nanoseconds);

/// Names the calling thread (PR_SET_NAME; at most 15 bytes are kept), for ps, top and debuggers.
int lockstep_net_set_thread_name(const char *name);

/// The current reading of `CLOCK_REALTIME` in nanoseconds.
int64_t lockstep_net_realtime_ns(void);

/// The current reading of `CLOCK_MONOTONIC` in nanoseconds.
int64_t lockstep_net_monotonic_ns(void);

/// Caps glibc's malloc arenas at `count` (`mallopt(M_ARENA_MAX)`, a macro Swift cannot see).
/// Returns 1 on success, 0 if refused.
int lockstep_limit_malloc_arenas(int count);

#endif
