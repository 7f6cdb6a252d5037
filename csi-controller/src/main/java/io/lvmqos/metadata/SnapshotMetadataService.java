package io.lvmqos.metadata;

import static io.lvmqos.errors.DriverException.requireArgument;

import csi.v1.Csi;
import csi.v1.SnapshotMetadataGrpc;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.lvmqos.errors.DriverException;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * CSI SnapshotMetadata: allocated and changed blocks of thin snapshots, from their pool's
 * metadata ({@link SnapshotMetadataReader}). Entries are VARIABLE_LENGTH byte ranges in whole
 * chunks of the pool, which never take more entries than FIXED_LENGTH blocks of one chunk would.
 * Pages go out as they are read, each sent only when the client can take it, so memory stays one
 * page however many chunks changed; the caller's deadline bounds the read.
 */
public final class SnapshotMetadataService extends SnapshotMetadataGrpc.SnapshotMetadataImplBase {

    /** Entries per message when the caller leaves max_results at 0: about 16 KiB of message. */
    static final int DEFAULT_MAX_RESULTS = 1024;
    private static final long READY_POLL_NANOS = 2_000_000;

    private final SnapshotMetadataReader reader;

    public SnapshotMetadataService(SnapshotMetadataReader reader) {
        this.reader = reader;
    }

    @Override
    public void getMetadataAllocated(Csi.GetMetadataAllocatedRequest request,
                                     StreamObserver<Csi.GetMetadataAllocatedResponse> reply) {
        requireArgument(!request.getSnapshotId().isEmpty(), "snapshot_id must not be empty");
        int max = maxResults(request.getMaxResults());
        requireArgument(request.getStartingOffset() >= 0, "starting_offset must not be negative");
        SnapshotMetadataReader.Resolved snapshot = reader.resolve("snapshot", request.getSnapshotId());
        long capacity = snapshot.device().sizeBytes();
        reader.allocated(snapshot, request.getStartingOffset(), max, paced(reply, page -> Csi.GetMetadataAllocatedResponse
                .newBuilder().setBlockMetadataType(Csi.BlockMetadataType.VARIABLE_LENGTH)
                .setVolumeCapacityBytes(capacity).addAllBlockMetadata(page).build()));
        reply.onCompleted();
    }

    @Override
    public void getMetadataDelta(Csi.GetMetadataDeltaRequest request,
                                 StreamObserver<Csi.GetMetadataDeltaResponse> reply) {
        requireArgument(!request.getBaseSnapshotId().isEmpty(), "base_snapshot_id must not be empty");
        requireArgument(!request.getTargetSnapshotId().isEmpty(), "target_snapshot_id must not be empty");
        int max = maxResults(request.getMaxResults());
        requireArgument(request.getStartingOffset() >= 0, "starting_offset must not be negative");
        SnapshotMetadataReader.Resolved base = reader.resolve("base snapshot", request.getBaseSnapshotId());
        SnapshotMetadataReader.Resolved target = reader.resolve("target snapshot", request.getTargetSnapshotId());
        long capacity = target.device().sizeBytes();
        reader.delta(base, target, request.getStartingOffset(), max, paced(reply, page -> Csi.GetMetadataDeltaResponse
                .newBuilder().setBlockMetadataType(Csi.BlockMetadataType.VARIABLE_LENGTH)
                .setVolumeCapacityBytes(capacity).addAllBlockMetadata(page).build()));
        reply.onCompleted();
    }

    private static int maxResults(int requested) {
        requireArgument(requested >= 0, "max_results must not be negative");
        return requested == 0 ? DEFAULT_MAX_RESULTS : requested;
    }

    /**
     * Sends each page once the transport can take it. The call's callbacks cannot run while this
     * method holds its thread, so readiness is polled; a cancelled call stops the read.
     */
    private static <T> Consumer<List<Csi.BlockMetadata>> paced(StreamObserver<T> reply,
                                                             Function<List<Csi.BlockMetadata>, T> message) {
        ServerCallStreamObserver<T> call = (ServerCallStreamObserver<T>) reply;
        return page -> {
            while (!call.isReady()) {
                if (call.isCancelled()) {
                    throw DriverException.aborted("the client cancelled the call");
                }
                LockSupport.parkNanos(READY_POLL_NANOS);
                if (io.grpc.Context.current().isCancelled()) {
                    throw DriverException.deadlineExceeded("the call's deadline passed while the client read slowly");
                }
            }
            reply.onNext(message.apply(page));
        };
    }
}
