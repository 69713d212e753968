package dev.vended.storage.hadoop.contract;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractContractVectoredReadTest;
import org.apache.hadoop.fs.contract.AbstractFSContract;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Hadoop's {@code AbstractContractVectoredReadTest} against {@link VendedContract}, once with heap
 * and once with direct buffers: merged and disjoint ranges, validation errors, ranges past the
 * end, vectored reads mixed with ordinary ones.
 */
@ParameterizedClass(name = "buffer-{0}")
@MethodSource("params")
class TestVendedContractVectoredRead extends AbstractContractVectoredReadTest {

    TestVendedContractVectoredRead(String bufferType) {
        super(bufferType);
    }

    @Override
    protected AbstractFSContract createContract(Configuration conf) {
        return new VendedContract(conf);
    }
}
