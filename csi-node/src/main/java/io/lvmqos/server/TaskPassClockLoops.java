package io.lvmqos.server;

import io.netty.channel.IoEventLoop;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SingleThreadIoEventLoop;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.Ticker;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * Netty's epoll event loops, one thread each, whose passes over their task queue read the clock
 * once instead of at every step.
 *
 * <p>Why: a pass reads the clock to find the scheduled tasks that are due, to set the pass's time
 * budget, and again after its tasks, and a timer that a task schedules reads it once more; about
 * six reads for each turn of the loop, and a call takes three or four turns. Where the kernel maps
 * no vDSO (user-mode Linux, the test node; a node booted with {@code vdso=0}) each read is a system
 * call: 50 to 70 µs in the UML guest, about a fifth of all system calls that a publish costs the
 * driver (PublishCostBenchmark).
 *
 * <p>Within one pass ({@code runAllTasks}), on the loop's own thread, a clock reading serves
 * {@value #READS_PER_READING} reads before the clock is read again. A pass runs tasks and never
 * waits (a task that blocks the loop is a bug whatever the clock does), so a reading is never older
 * than the tasks run since it was taken, and none outlives its pass: the next pass, the wait in
 * epoll and every other thread read the clock itself. The cost is that a timer scheduled late in
 * a long pass may run up to that pass's length early; the loop's timers are a call's deadline and
 * its cancellation, given in seconds.
 */
final class TaskPassClockLoops extends MultiThreadIoEventLoopGroup {

    /** How many reads one clock reading serves within a pass; a long pass still sees time move. */
    static final int READS_PER_READING = 16;

    /** {@code threads} loops, their threads named {@code name-N}. */
    TaskPassClockLoops(int threads, String name) {
        super(threads, new DefaultThreadFactory(name), EpollIoHandler.newFactory());
    }

    @Override
    protected IoEventLoop newChild(Executor executor, IoHandlerFactory ioHandlerFactory, Object... args) {
        return new Loop(this, executor, ioHandlerFactory);
    }

    /** One loop: its clock is {@link PassClock} while it runs a pass over its tasks. */
    static final class Loop extends SingleThreadIoEventLoop {

        // null while the super constructor runs, which reads the ticker once
        private final PassClock clock = new PassClock(Ticker.systemTicker());

        Loop(MultiThreadIoEventLoopGroup group, Executor executor, IoHandlerFactory ioHandlerFactory) {
            super(group, executor, ioHandlerFactory);
        }

        @Override
        public Ticker ticker() {
            PassClock passClock = clock;
            return passClock == null ? Ticker.systemTicker() : passClock;
        }

        @Override
        protected boolean runAllTasks(long timeoutNanos) {
            clock.beginPass();
            try {
                return super.runAllTasks(timeoutNanos);
            } finally {
                clock.endPass();
            }
        }

        @Override
        protected boolean runAllTasks() {
            clock.beginPass();
            try {
                return super.runAllTasks();
            } finally {
                clock.endPass();
            }
        }
    }

    /**
     * The system's clock, as Netty's ticker gives it (nanoseconds since Netty's origin), except on
     * the thread in a pass, which gets one reading for up to {@value #READS_PER_READING} reads.
     */
    static final class PassClock implements Ticker {

        private final Ticker system;
        // Written and read by the loop's thread only. Another thread may see a stale passThread,
        // but never itself in it, so it always reads the system's clock.
        private Thread passThread;
        private long reading;
        private int readsLeft;

        PassClock(Ticker system) {
            this.system = system;
        }

        void beginPass() {
            passThread = Thread.currentThread();
            readsLeft = 0;
        }

        void endPass() {
            passThread = null;
            readsLeft = 0;
        }

        @Override
        public long initialNanoTime() {
            return system.initialNanoTime();
        }

        @Override
        public long nanoTime() {
            if (Thread.currentThread() != passThread) {
                return system.nanoTime();
            }
            if (readsLeft == 0) {
                reading = system.nanoTime();
                readsLeft = READS_PER_READING;
            }
            readsLeft--;
            return reading;
        }

        @Override
        public void sleep(long delay, TimeUnit unit) throws InterruptedException {
            system.sleep(delay, unit);
        }
    }
}
