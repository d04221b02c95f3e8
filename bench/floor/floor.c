/* floor: the least work an HTTP/1.1 load generator can do, as the floor of bench/compare.sh's
 * CPU per request ("bars' floor", issue 36): one thread, CONNS keep-alive connections, each
 * writing one fixed GET request, reading the response (one read() per readiness, framed by
 * Content-Length) and writing the next. No timing, no statistics, no allocation per request.
 *
 *   cc -O2 -o target/bench/floor bench/floor/floor.c
 *   floor -c CONNS -d SECS http://127.0.0.1:PORT/PATH
 *
 * Prints "requests N" (responses completed) and exits 0; any error (connect, read, write, a
 * closed connection, a non-2xx status, a response without Content-Length or with more bytes
 * than it announced) prints a line to stderr and exits 1. Level-triggered epoll on
 * non-blocking sockets; the run ends at a timerfd after SECS seconds. IPv4 literals only.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

/* Response headers split over reads are gathered here, per connection (bytes). */
#define CARRY 1024
/* The one read buffer shared by all connections (bytes): a 100 KB body in one or two reads. */
#define SCRATCH (256 * 1024)
#define MAX_EVENTS 1024
#define TIMER_TAG UINT32_MAX

struct conn {
  int fd;
  int in_body;          /* 0: reading the status line and headers; 1: the body */
  uint64_t body_left;   /* body bytes still to read (bytes) */
  uint32_t carry_len;   /* bytes of a split header block in carry[this connection] */
};

static struct conn *conns;
static char *carry;      /* CARRY bytes per connection, touched only when headers are split */
static char scratch[SCRATCH];
static char request[512];
static size_t request_len;
static uint64_t completed;

static void fail(const char *what, int idx) {
  if (idx >= 0)
    fprintf(stderr, "floor: connection %d: %s%s%s\n", idx, what, errno ? ": " : "",
            errno ? strerror(errno) : "");
  else
    fprintf(stderr, "floor: %s%s%s\n", what, errno ? ": " : "", errno ? strerror(errno) : "");
  exit(1);
}

/* A protocol error: no errno to print. */
static void bad(const char *what, int idx) {
  errno = 0;
  fail(what, idx);
}

static void send_request(int idx) {
  errno = 0;
  ssize_t n = write(conns[idx].fd, request, request_len);
  /* A fresh socket's send buffer holds a ~60-byte request whole: a short write is an error. */
  if (n != (ssize_t)request_len) fail("write", idx);
}

/* Scans the response head at [h, h + len): returns its length (up to and including the empty
 * line), or 0 while it is incomplete, and sets *content_length. One memchr per line, and a
 * closer look only at lines that can be Content-Length or Transfer-Encoding. */
static size_t scan_head(const char *h, size_t len, uint64_t *content_length, int idx) {
  const char *end = h + len;
  const char *p = memchr(h, '\n', len); /* the status line */
  int found = 0;
  if (!p) return 0;
  p++;
  for (;;) {
    if (p >= end) return 0;
    if (*p == '\r' || *p == '\n') { /* the empty line: the head is complete */
      if (*p == '\r' && ++p >= end) return 0;
      if (*p++ != '\n') bad("bad header line", idx);
      break;
    }
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl) return 0;
    size_t line = (size_t)(nl - p);
    if (line > 15 && (p[8] | 0x20) == 'l' && strncasecmp(p, "content-length:", 15) == 0) {
      const char *d = p + 15;
      while (*d == ' ' || *d == '\t') d++;
      if (*d < '0' || *d > '9') bad("bad Content-Length", idx);
      uint64_t v = 0;
      while (*d >= '0' && *d <= '9') v = v * 10 + (uint64_t)(*d++ - '0');
      *content_length = v;
      found = 1;
    } else if (line > 18 && (p[0] | 0x20) == 't' && strncasecmp(p, "transfer-encoding:", 18) == 0) {
      bad("Transfer-Encoding is not supported (Content-Length only)", idx);
    }
    p = nl + 1;
  }
  /* "HTTP/1.1 200 ..." */
  if (len < 12 || memcmp(h, "HTTP/1.", 7) != 0) bad("not an HTTP/1.x response", idx);
  if (h[9] != '2') {
    fprintf(stderr, "floor: connection %d: status %.3s\n", idx, h + 9);
    exit(1);
  }
  if (!found) bad("response without Content-Length", idx);
  return (size_t)(p - h);
}

/* Consumes body bytes; on the last one counts the response and writes the next request. */
static void take_body(int idx, size_t n) {
  struct conn *c = &conns[idx];
  if (n > c->body_left) bad("more bytes than the response announced", idx);
  c->body_left -= n;
  if (c->body_left == 0) {
    c->in_body = 0;
    completed++;
    send_request(idx);
  } else {
    c->in_body = 1;
  }
}

static void on_readable(int idx) {
  struct conn *c = &conns[idx];
  ssize_t n = read(c->fd, scratch, SCRATCH);
  if (n < 0) {
    if (errno == EAGAIN || errno == EINTR) return;
    fail("read", idx);
  }
  if (n == 0) bad("the server closed the connection", idx);
  if (c->in_body) {
    take_body(idx, (size_t)n);
    return;
  }
  const char *data = scratch;
  size_t len = (size_t)n;
  char *mine = carry + (size_t)idx * CARRY;
  size_t old = c->carry_len;
  if (old) { /* the header block began in an earlier read: gather it */
    size_t room = CARRY - old, take = len < room ? len : room;
    memcpy(mine + old, scratch, take);
    data = mine;
    len = old + take;
  }
  size_t head = scan_head(data, len, &c->body_left, idx); /* header bytes, counted from data */
  if (!head) {
    if (len >= CARRY) bad("response headers over 1 KiB", idx);
    if (!old) memcpy(mine, scratch, len);
    c->carry_len = (uint32_t)len;
    return;
  }
  c->carry_len = 0;
  take_body(idx, (size_t)n - (head - old));
}

static void parse_url(const char *url, struct sockaddr_in *addr, const char **path, char *host,
                      size_t host_size) {
  const char *p = url;
  if (strncmp(p, "http://", 7) != 0) {
    fprintf(stderr, "floor: the URL must start with http:// (got %s)\n", url);
    exit(2);
  }
  p += 7;
  const char *slash = strchr(p, '/');
  size_t authority = slash ? (size_t)(slash - p) : strlen(p);
  *path = slash ? slash : "/";
  if (authority == 0 || authority >= host_size) {
    fprintf(stderr, "floor: bad host in %s\n", url);
    exit(2);
  }
  memcpy(host, p, authority);
  host[authority] = 0;
  char ip[64];
  unsigned port = 80;
  const char *colon = strchr(host, ':');
  size_t iplen = colon ? (size_t)(colon - host) : authority;
  if (iplen >= sizeof ip) iplen = sizeof ip - 1;
  memcpy(ip, host, iplen);
  ip[iplen] = 0;
  if (colon) port = (unsigned)strtoul(colon + 1, NULL, 10);
  memset(addr, 0, sizeof *addr);
  addr->sin_family = AF_INET;
  addr->sin_port = htons((uint16_t)port);
  if (port == 0 || port > 65535 || inet_pton(AF_INET, ip, &addr->sin_addr) != 1) {
    fprintf(stderr, "floor: the host must be an IPv4 address and a port (got %s)\n", host);
    exit(2);
  }
}

static void usage(void) {
  fprintf(stderr, "usage: floor -c CONNS -d SECS http://127.0.0.1:PORT/PATH\n");
  exit(2);
}

int main(int argc, char **argv) {
  long nconns = 0, secs = 0;
  int opt;
  while ((opt = getopt(argc, argv, "c:d:")) != -1) {
    if (opt == 'c') nconns = strtol(optarg, NULL, 10);
    else if (opt == 'd') secs = strtol(optarg, NULL, 10); /* "5" or "5s" */
    else usage();
  }
  if (optind != argc - 1 || nconns <= 0 || nconns > 1000000 || secs <= 0) usage();

  struct sockaddr_in addr;
  const char *path;
  char host[256];
  parse_url(argv[optind], &addr, &path, host, sizeof host);
  int len = snprintf(request, sizeof request, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, host);
  if (len <= 0 || (size_t)len >= sizeof request) usage();
  request_len = (size_t)len;

  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  conns = calloc((size_t)nconns, sizeof *conns);
  carry = calloc((size_t)nconns, CARRY);
  if (!conns || !carry) fail("out of memory", -1);

  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) fail("epoll_create1", -1);
  int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
  struct itimerspec its = {.it_value = {.tv_sec = secs}};
  if (tfd < 0 || timerfd_settime(tfd, 0, &its, NULL) != 0) fail("timerfd", -1);
  struct epoll_event ev = {.events = EPOLLIN, .data.u32 = TIMER_TAG};
  if (epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev) != 0) fail("epoll_ctl", -1);

  /* Blocking connects (loopback: the handshake completes within connect), then non-blocking. */
  int one = 1;
  for (int i = 0; i < nconns; i++) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) fail("socket", i);
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) fail("connect", i);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (fcntl(fd, F_SETFL, O_NONBLOCK) != 0) fail("fcntl", i);
    conns[i].fd = fd;
    ev.data.u32 = (uint32_t)i;
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) fail("epoll_ctl", i);
  }
  for (int i = 0; i < nconns; i++) send_request(i);

  static struct epoll_event events[MAX_EVENTS];
  for (;;) {
    int n = epoll_wait(ep, events, MAX_EVENTS, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("epoll_wait", -1);
    }
    for (int k = 0; k < n; k++) {
      uint32_t idx = events[k].data.u32;
      if (idx == TIMER_TAG) {
        printf("requests %llu\n", (unsigned long long)completed);
        return 0;
      }
      if (events[k].events & (EPOLLERR | EPOLLHUP) && !(events[k].events & EPOLLIN))
        bad("connection error", (int)idx);
      on_readable((int)idx);
    }
  }
}
