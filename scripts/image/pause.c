/*
 * The pod sandbox's process (the "pause" container) of the UML test node, built by scripts/build-image
 * with gcc -static into an image of one file. It holds the pod's namespaces open and, as PID 1 of the
 * sandbox, reaps whatever is re-parented to it; it exits when the runtime stops the sandbox. A program
 * of our own rather than tini: tini needs a child to run, and the sandbox has nothing to run.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int signo) {
    (void) signo;
    _exit(0);
}

static void reap(int signo) {
    (void) signo;
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
}

int main(void) {
    struct sigaction on_stop = {.sa_handler = stop};
    struct sigaction on_child = {.sa_handler = reap, .sa_flags = SA_NOCLDSTOP | SA_RESTART};
    /* PID 1 gets no default action for SIGTERM: without a handler the runtime would wait for its timeout. */
    if (sigaction(SIGINT, &on_stop, NULL) != 0 || sigaction(SIGTERM, &on_stop, NULL) != 0
            || sigaction(SIGCHLD, &on_child, NULL) != 0) {
        return 1;
    }
    for (;;) {
        pause();
    }
}
