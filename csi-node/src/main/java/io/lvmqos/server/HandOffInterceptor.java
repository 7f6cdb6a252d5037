package io.lvmqos.server;

import io.grpc.Context;
import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hands each call from the transport's event loop to a worker thread once, at its half-close.
 *
 * <p>The server runs gRPC's callbacks on the event loop that read the request (a direct
 * executor): starting the call, reading its one request message. Every unary and
 * server-streaming method of the CSI services runs its handler at the half-close, and handlers
 * block (mount(2), cgroup files, lvm, the per-volume lock), so from the half-close on each of
 * the call's callbacks runs on a worker of {@code workers}, in order, one at a time, in the
 * call's gRPC {@link Context} (its deadline and cancellation). With gRPC's own executor every
 * callback was a hand-off of its own: a grpc-java client sends the end of its request in a
 * frame of its own, and the driver woke a worker for the request, let it park again, and woke
 * it for the end (traced in the user-mode-Linux guest, PublishCostBenchmark, 2026-12-07).
 * Now a call wakes one worker, whatever frames its request came in.
 */
final class HandOffInterceptor implements ServerInterceptor {

    private static final Logger log = LoggerFactory.getLogger(HandOffInterceptor.class);

    private final Executor workers;

    HandOffInterceptor(Executor workers) {
        this.workers = workers;
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                      ServerCallHandler<Q, R> next) {
        InOrder worker = new InOrder(workers, call);
        return new SimpleForwardingServerCallListener<>(next.startCall(call, headers)) {
            @Override
            public void onMessage(Q message) {
                if (worker.handedOff()) {
                    worker.run(() -> super.onMessage(message));
                } else {
                    super.onMessage(message);
                }
            }

            @Override
            public void onHalfClose() {
                worker.handOff();
                worker.run(super::onHalfClose);
            }

            @Override
            public void onCancel() {
                worker.runOrInline(super::onCancel);
            }

            @Override
            public void onComplete() {
                worker.runOrInline(super::onComplete);
            }

            @Override
            public void onReady() {
                worker.runOrInline(super::onReady);
            }
        };
    }

    /**
     * One call's callbacks from its hand-off on: queued, and run one after the other on a
     * worker, each in the gRPC context current when it was queued. Before the hand-off they run
     * where gRPC calls them, the event loop, which calls them one at a time itself.
     */
    private static final class InOrder {
        private final Executor workers;
        private final ServerCall<?, ?> call;
        private final Queue<Runnable> queue = new ConcurrentLinkedQueue<>();
        private final AtomicBoolean draining = new AtomicBoolean();
        private volatile boolean handedOff;

        InOrder(Executor workers, ServerCall<?, ?> call) {
            this.workers = workers;
            this.call = call;
        }

        boolean handedOff() {
            return handedOff;
        }

        void handOff() {
            handedOff = true;
        }

        void runOrInline(Runnable callback) {
            if (handedOff) {
                run(callback);
            } else {
                callback.run();
            }
        }

        void run(Runnable callback) {
            queue.add(Context.current().wrap(callback));
            if (draining.compareAndSet(false, true)) {
                try {
                    workers.execute(this::drain);
                } catch (RejectedExecutionException shuttingDown) {
                    draining.set(false);
                    queue.clear();
                    call.close(Status.UNAVAILABLE.withDescription("the driver is shutting down"), new Metadata());
                }
            }
        }

        private void drain() {
            try {
                Runnable next;
                while ((next = queue.poll()) != null) {
                    try {
                        next.run();
                    } catch (RuntimeException | Error e) {
                        // RpcInterceptor answers a handler's failure; this is one of gRPC's own callbacks failing
                        log.error("a gRPC callback of {} failed", call.getMethodDescriptor().getFullMethodName(), e);
                    }
                }
            } finally {
                draining.set(false);
                // a callback queued after the last poll and before the flag went down would wait for the next one
                if (!queue.isEmpty() && draining.compareAndSet(false, true)) {
                    workers.execute(this::drain);
                }
            }
        }
    }
}
