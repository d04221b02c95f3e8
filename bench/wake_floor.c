/*
 * The CPU price of evenly spaced arrivals on this machine: one thread that does nothing but
 * sleep on a timerfd through epoll and wake once per PERIOD_NS, for SECONDS, as an open-model
 * generator that starts each arrival at its own time must (issue 36). Its user+sys CPU time
 * divided by the wake-ups is the floor of such a generator's CPU per request, before any
 * request is sent; compare it with a bursty tool's whole CPU per request.
 *
 * REARM 1: re-armed (timerfd_settime) after each expiry, as run/timer/timerfd.rs does;
 * REARM 0: a periodic timer, whose expiry is read (the kernel re-arms a periodic timerfd only
 * on read(2), fs/timerfd.c: timerfd_read), so it saves no system call per wake-up.
 *
 *   cc -O2 -o /tmp/wake_floor bench/wake_floor.c
 *   /usr/bin/time -f '%U %S %w' taskset -c 1 /tmp/wake_floor 200000 4 1   # 5,000 wake-ups/s
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s PERIOD_NS SECONDS REARM\n", argv[0]);
    return 2;
  }
  long period_ns = atol(argv[1]);
  int seconds = atoi(argv[2]);
  int rearm = atoi(argv[3]);
  if (period_ns <= 0 || period_ns >= 1000000000L || seconds <= 0) {
    fprintf(stderr, "PERIOD_NS in 1..999999999, SECONDS > 0\n");
    return 2;
  }
  int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
  int ep = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLIN | EPOLLET};
  if (fd < 0 || ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
    perror("timerfd/epoll");
    return 1;
  }
  struct itimerspec its = {{0, rearm ? 0 : period_ns}, {0, period_ns}};
  timerfd_settime(fd, 0, &its, NULL);
  long wakes = 0, expiries = 0, total = seconds * (1000000000L / period_ns);
  struct epoll_event out[8];
  while (expiries < total) {
    if (epoll_wait(ep, out, 8, -1) < 1)
      continue;
    wakes++;
    if (rearm) {
      timerfd_settime(fd, 0, &its, NULL);
      expiries++;
    } else {
      uint64_t n;
      if (read(fd, &n, sizeof n) == sizeof n)
        expiries += (long)n;
    }
  }
  printf("%ld expiries, %ld wake-ups\n", expiries, wakes);
  return 0;
}
