package io.lvmqos.server;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.lvmqos.errors.Echo;
import io.lvmqos.errors.StatusMapper;
import io.lvmqos.metrics.RpcMetrics;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gRPC edge: turns whatever a service throws into a status (through {@link StatusMapper},
 * the one place that knows the mapping) and logs one line per call with the method, the volume
 * or snapshot it concerns, the duration and the status. Only id fields are logged, so fields
 * marked csi_secret never reach the log; the id is echoed through {@link Echo}, so a name with a
 * newline stays on its line and a 4 KiB id is cut. Probe is logged at debug: the livenessprobe calls it
 * every few seconds.
 */
final class RpcInterceptor implements ServerInterceptor {

    private static final Logger log = LoggerFactory.getLogger("rpc");
    private static final List<String> ID_FIELDS =
            List.of("volume_id", "snapshot_id", "target_snapshot_id", "source_volume_id", "name");

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                      ServerCallHandler<Q, R> next) {
        String method = call.getMethodDescriptor().getBareMethodName();
        long started = System.nanoTime();
        CallRecord record = new CallRecord();
        ServerCall<Q, R> logged = new SimpleForwardingServerCall<>(call) {
            @Override
            public void close(Status status, Metadata trailers) {
                long nanos = System.nanoTime() - started;
                try {
                    // answered first, logged after: the client need not wait for the log line's write
                    super.close(status, trailers);
                } finally {
                    logged(status, nanos);
                }
            }

            private void logged(Status status, long nanos) {
                RpcMetrics.shared().record(method, status.getCode(), nanos);
                long millis = TimeUnit.NANOSECONDS.toMillis(nanos);
                String line = "{} {} {} ms {}{}";
                Object[] args = {method, record.subject, millis, status.getCode(),
                        status.isOk() ? "" : ": " + Echo.message(String.valueOf(status.getDescription()))};
                if ("Probe".equals(method) && status.isOk()) {
                    log.debug(line, args);
                } else if (status.getCode() == Status.Code.INTERNAL) {
                    log.warn(line, args);
                } else {
                    log.info(line, args);
                }
            }
        };
        ServerCall.Listener<Q> listener = next.startCall(logged, headers);
        return new SimpleForwardingServerCallListener<>(listener) {
            @Override
            public void onMessage(Q message) {
                record.subject = subjectOf(message);
                guard(() -> super.onMessage(message));
            }

            @Override
            public void onHalfClose() {
                guard(super::onHalfClose);
            }

            private void guard(Runnable step) {
                try {
                    step.run();
                } catch (RuntimeException | Error failure) {
                    if (StatusMapper.isUnexpected(failure)) {
                        log.error("{} failed unexpectedly", method, failure);
                    }
                    logged.close(StatusMapper.toStatus(failure), new Metadata());
                }
            }
        };
    }

    private static String subjectOf(Object message) {
        if (!(message instanceof Message proto)) {
            return "-";
        }
        for (String fieldName : ID_FIELDS) {
            FieldDescriptor field = proto.getDescriptorForType().findFieldByName(fieldName);
            if (field != null && field.getJavaType() == FieldDescriptor.JavaType.STRING && !field.isRepeated()) {
                String value = (String) proto.getField(field);
                if (!value.isEmpty()) {
                    return Echo.of(value);
                }
            }
        }
        return "-";
    }

    private static final class CallRecord {
        private volatile String subject = "-";
    }
}
