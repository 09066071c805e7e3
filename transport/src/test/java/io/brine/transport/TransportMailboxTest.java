package io.brine.transport;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

class TransportMailboxTest {

    @Test
    void drainsInOrderInBatchesAndSaysWhatIsLeft() {
        try (TransportMailbox<Integer> mailbox = new TransportMailbox<>(100)) {
            for (int i = 0; i < 5; i++) {
                assertThat(mailbox.offer(i)).isTrue();
            }
            List<Integer> seen = new ArrayList<>();
            assertThat(mailbox.drain(seen::add, 3)).isTrue();
            assertThat(mailbox.drain(seen::add, 3)).isFalse();
            assertThat(seen).containsExactly(0, 1, 2, 3, 4);
            assertThat(mailbox.size()).isZero();
        }
    }

    @Test
    void refusesBeyondCapacityAndAfterClose() {
        TransportMailbox<String> mailbox = new TransportMailbox<>(2);
        assertThat(mailbox.offer("a")).isTrue();
        assertThat(mailbox.offer("b")).isTrue();
        assertThat(mailbox.offer("c")).isFalse();
        mailbox.drain(s -> {}, 10);
        assertThat(mailbox.offer("c")).isTrue();
        mailbox.close();
        mailbox.close();
        assertThat(mailbox.offer("d")).isFalse();
    }

    @Test
    void anOfferWakesTheOwnerOnceUntilDrained() throws IOException {
        try (TransportMailbox<String> mailbox = new TransportMailbox<>(10);
                Selector selector = Selector.open()) {
            mailbox.wakeupChannel().register(selector, SelectionKey.OP_READ);
            assertThat(selector.selectNow()).isZero();
            mailbox.offer("a");
            mailbox.offer("b");
            assertThat(selector.selectNow()).isOne();
            selector.selectedKeys().clear();
            mailbox.drain(s -> {}, 10);
            assertThat(selector.selectNow()).isZero();
            mailbox.offer("c");
            assertThat(selector.selectNow()).isOne();
        }
    }

    @Test
    void anInterruptedCallerDoesNotBreakTheMailbox() throws InterruptedException {
        try (TransportMailbox<String> mailbox = new TransportMailbox<>(10)) {
            CountDownLatch done = new CountDownLatch(1);
            Thread caller = new Thread(() -> {
                Thread.currentThread().interrupt();
                mailbox.offer("from an interrupted thread");
                done.countDown();
            });
            caller.start();
            done.await();
            mailbox.drain(s -> {}, 10);
            assertThat(mailbox.offer("later")).isTrue();
            List<String> seen = new ArrayList<>();
            mailbox.drain(seen::add, 10);
            assertThat(seen).containsExactly("later");
        }
    }
}
