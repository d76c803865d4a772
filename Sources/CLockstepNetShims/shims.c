#define _GNU_SOURCE
#include "CLockstepNetShims.h"

#include <errno.h>
#include <malloc.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

_Static_assert(sizeof(struct timespec) == 16, "the timestamp control message is read as a 64-bit timespec");

int lockstep_net_enable_receive_timestamps(int fd) {
    int on = 1;
    return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on));
}

ssize_t lockstep_net_receive(int fd, void *buffer, size_t capacity, struct sockaddr_storage *from,
                             socklen_t *from_length, int64_t *kernel_realtime_ns) {
    struct iovec vector = {.iov_base = buffer, .iov_len = capacity};
    union {
        char bytes[CMSG_SPACE(sizeof(struct timespec)) * 2];
        struct cmsghdr align;
    } control;
    struct msghdr message;
    memset(&message, 0, sizeof(message));
    message.msg_name = from;
    message.msg_namelen = from ? (socklen_t)sizeof(*from) : 0;
    message.msg_iov = &vector;
    message.msg_iovlen = 1;
    message.msg_control = control.bytes;
    message.msg_controllen = sizeof(control.bytes);

    /* MSG_TRUNC makes recvmsg return the datagram's real length, so oversized ones are recognised. */
    ssize_t length = recvmsg(fd, &message, MSG_DONTWAIT | MSG_TRUNC);
    if (length < 0) return -1;
    if (from_length) *from_length = message.msg_namelen;
    *kernel_realtime_ns = -1;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_TIMESTAMPNS) {
            struct timespec stamp;
            memcpy(&stamp, CMSG_DATA(header), sizeof(stamp));
            *kernel_realtime_ns = (int64_t)stamp.tv_sec * 1000000000 + stamp.tv_nsec;
        }
    }
    return length;
}

int lockstep_net_wait(struct pollfd *fds, nfds_t count, int64_t timeout_ns) {
    struct timespec timeout;
    struct timespec *timeout_pointer = NULL;
    if (timeout_ns >= 0) {
        timeout.tv_sec = timeout_ns / 1000000000;
        timeout.tv_nsec = timeout_ns % 1000000000;
        timeout_pointer = &timeout;
    }
    int ready = ppoll(fds, count, timeout_pointer, NULL);
    if (ready < 0 && errno == EINTR) return 0;
    return ready;
}

int lockstep_net_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

int lockstep_net_eventfd_signal(int fd) {
    uint64_t one = 1;
    return write(fd, &one, sizeof(one)) == sizeof(one) ? 0 : -1;
}

void lockstep_net_eventfd_drain(int fd) {
    uint64_t value;
    while (read(fd, &value, sizeof(value)) == sizeof(value)) {
    }
}

int lockstep_net_timerfd(void) { return timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC); }

int lockstep_net_timerfd_arm(int fd, int64_t monotonic_ns) {
    struct itimerspec spec;
    memset(&spec, 0, sizeof(spec));
    if (monotonic_ns > 0) {
        spec.it_value.tv_sec = monotonic_ns / 1000000000;
        spec.it_value.tv_nsec = monotonic_ns % 1000000000;
    }
    return timerfd_settime(fd, TFD_TIMER_ABSTIME, &spec, NULL);
}

void lockstep_net_timerfd_drain(int fd) {
    uint64_t expirations;
    while (read(fd, &expirations, sizeof(expirations)) == sizeof(expirations)) {
    }
}

int lockstep_net_set_timer_slack(unsigned long nanoseconds) { return prctl(PR_SET_TIMERSLACK, nanoseconds, 0, 0, 0); }

int lockstep_net_set_thread_name(const char *name) { return prctl(PR_SET_NAME, name, 0, 0, 0); }

int64_t lockstep_net_realtime_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

int64_t lockstep_net_monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

int lockstep_limit_malloc_arenas(int count) {
    return mallopt(M_ARENA_MAX, count);
}
