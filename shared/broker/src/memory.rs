//! The in-memory twin of the RabbitMQ broker, for `trawl run` and tests.
//!
//! It keeps RabbitMQ's semantics where stage code can observe them: at most `prefetch`
//! unsettled deliveries per subscription, an unsettled delivery that is dropped goes back to its
//! queue flagged redelivered, requeues count toward the delivery limit after which the message
//! is dead-lettered with `x-first-death-reason: delivery_limit`, and delayed publishes arrive
//! after their tier. Nothing survives the process: that is what the real broker is for.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

use crate::{
    Broker, BrokerError, BrokerSettings, Delivery, Message, Queue, QueueStats, Settle,
    HEADER_DEATH_REASON,
};

#[derive(Clone)]
pub struct MemoryBroker {
    inner: Arc<Inner>,
}

struct Inner {
    settings: BrokerSettings,
    queues: Mutex<HashMap<Queue, VecDeque<Entry>>>,
    notify: HashMap<Queue, Arc<Notify>>,
    consumers: Mutex<HashMap<Queue, u64>>,
}

struct Entry {
    message: Message,
    deliveries: u32,
}

impl MemoryBroker {
    pub fn new(settings: BrokerSettings) -> Self {
        let notify = Queue::ALL
            .iter()
            .map(|&q| (q, Arc::new(Notify::new())))
            .collect();
        MemoryBroker {
            inner: Arc::new(Inner {
                settings,
                queues: Mutex::new(HashMap::new()),
                notify,
                consumers: Mutex::new(HashMap::new()),
            }),
        }
    }
}

impl Inner {
    fn push(&self, queue: Queue, entry: Entry, front: bool) {
        {
            let mut queues = self.queues.lock().expect("broker lock");
            let q = queues.entry(queue).or_default();
            if front {
                q.push_front(entry);
            } else {
                q.push_back(entry);
            }
        }
        self.notify[&queue].notify_one();
    }

    fn pop(&self, queue: Queue) -> Option<Entry> {
        self.queues
            .lock()
            .expect("broker lock")
            .get_mut(&queue)?
            .pop_front()
    }

    fn consumer_gone(&self, queue: Queue) {
        if let Some(n) = self.consumers.lock().expect("broker lock").get_mut(&queue) {
            *n = n.saturating_sub(1);
        }
    }

    /// Returns a message to its queue, or dead-letters it once it has used its deliveries.
    fn requeue(&self, queue: Queue, mut entry: Entry) {
        if entry.deliveries > self.settings.delivery_limit {
            entry
                .message
                .headers
                .insert(HEADER_DEATH_REASON.into(), "delivery_limit".into());
            entry.message.headers.insert(
                "x-first-death-queue".into(),
                self.settings.queue_name(queue),
            );
            entry.deliveries = 0;
            self.push(Queue::Dead, entry, false);
        } else {
            // RabbitMQ's quorum queues also return a requeued message to the head.
            self.push(queue, entry, true);
        }
    }
}

#[async_trait]
impl Broker for MemoryBroker {
    async fn publish(&self, queue: Queue, message: Message) -> Result<(), BrokerError> {
        self.inner.push(
            queue,
            Entry {
                message,
                deliveries: 0,
            },
            false,
        );
        Ok(())
    }

    async fn publish_delayed(
        &self,
        queue: Queue,
        message: Message,
        delay: Duration,
    ) -> Result<(), BrokerError> {
        let tier = self.inner.settings.tier_for(delay);
        let inner = Arc::clone(&self.inner);
        tokio::spawn(async move {
            tokio::time::sleep(tier).await;
            inner.push(
                queue,
                Entry {
                    message,
                    deliveries: 0,
                },
                false,
            );
        });
        Ok(())
    }

    async fn consume(
        &self,
        queue: Queue,
        prefetch: u16,
    ) -> Result<Box<dyn crate::Subscription>, BrokerError> {
        *self
            .inner
            .consumers
            .lock()
            .expect("broker lock")
            .entry(queue)
            .or_default() += 1;
        let step = u32::from(prefetch.max(1));
        Ok(Box::new(MemorySubscription {
            inner: Arc::clone(&self.inner),
            queue,
            permits: Arc::new(Semaphore::new(step as usize)),
            step,
            granted: step,
            window: None,
            cancelled: false,
        }))
    }

    async fn stats(&self, queue: Queue) -> Result<QueueStats, BrokerError> {
        let ready = {
            let queues = self.inner.queues.lock().expect("broker lock");
            queues.get(&queue).map_or(0, |q| q.len() as u64)
        };
        let consumers = self.inner.consumers.lock().expect("broker lock");
        Ok(QueueStats {
            ready,
            consumers: consumers.get(&queue).copied().unwrap_or(0),
        })
    }

    async fn delete_all(&self) -> Result<(), BrokerError> {
        self.inner.queues.lock().expect("broker lock").clear();
        Ok(())
    }

    fn reconnects(&self) -> u64 {
        0
    }
}

struct MemorySubscription {
    inner: Arc<Inner>,
    queue: Queue,
    /// One per delivery that may be unsettled; `granted` in all.
    permits: Arc<Semaphore>,
    step: u32,
    granted: u32,
    window: Option<tokio::sync::watch::Receiver<u32>>,
    cancelled: bool,
}

impl MemorySubscription {
    /// Grants or withdraws permits to match the window followed.
    fn apply_window(&mut self) {
        let Some(window) = &mut self.window else {
            return;
        };
        let wanted = crate::window_steps(*window.borrow_and_update(), self.step);
        if wanted > self.granted {
            self.permits.add_permits((wanted - self.granted) as usize);
        } else if wanted < self.granted {
            // Withdrawn as deliveries are settled, as RabbitMQ's credit shrinks.
            let (permits, n) = (Arc::clone(&self.permits), self.granted - wanted);
            tokio::spawn(async move {
                if let Ok(taken) = permits.acquire_many_owned(n).await {
                    taken.forget();
                }
            });
        }
        self.granted = wanted;
    }
}

impl Drop for MemorySubscription {
    fn drop(&mut self) {
        if !self.cancelled {
            self.inner.consumer_gone(self.queue);
        }
    }
}

#[async_trait]
impl crate::Subscription for MemorySubscription {
    async fn next(&mut self) -> Option<Delivery> {
        if self.cancelled {
            return None;
        }
        let permit = loop {
            self.apply_window();
            tokio::select! {
                permit = Arc::clone(&self.permits).acquire_owned() => break permit.ok()?,
                () = crate::window_changed(&mut self.window) => {}
            }
        };
        let notify = Arc::clone(&self.inner.notify[&self.queue]);
        loop {
            let notified = notify.notified();
            if let Some(mut entry) = self.inner.pop(self.queue) {
                // Another consumer may be waiting too: pass the wake-up on if more is ready.
                notify.notify_one();
                entry.deliveries += 1;
                let redelivered = entry.deliveries > 1;
                let message = entry.message.clone();
                return Some(Delivery {
                    message,
                    redelivered,
                    settle: Box::new(MemorySettle {
                        inner: Arc::clone(&self.inner),
                        queue: self.queue,
                        entry: Some(entry),
                        settled: AtomicBool::new(false),
                        _permit: permit,
                    }),
                });
            }
            notified.await;
        }
    }

    async fn cancel(&mut self) {
        if !self.cancelled {
            self.inner.consumer_gone(self.queue);
        }
        self.cancelled = true;
        self.permits.close();
    }

    fn follow(&mut self, window: tokio::sync::watch::Receiver<u32>) {
        self.window = Some(window);
    }
}

struct MemorySettle {
    inner: Arc<Inner>,
    queue: Queue,
    entry: Option<Entry>,
    settled: AtomicBool,
    _permit: OwnedSemaphorePermit,
}

#[async_trait]
impl Settle for MemorySettle {
    async fn ack(mut self: Box<Self>) -> Result<(), BrokerError> {
        self.settled.store(true, Ordering::SeqCst);
        self.entry.take();
        Ok(())
    }

    async fn requeue(mut self: Box<Self>) -> Result<(), BrokerError> {
        self.settled.store(true, Ordering::SeqCst);
        if let Some(entry) = self.entry.take() {
            self.inner.requeue(self.queue, entry);
        }
        Ok(())
    }
}

impl Drop for MemorySettle {
    /// A delivery dropped unsettled goes back, as when a RabbitMQ consumer's channel closes.
    fn drop(&mut self) {
        if !self.settled.load(Ordering::SeqCst) {
            if let Some(entry) = self.entry.take() {
                self.inner.requeue(self.queue, entry);
            }
        }
    }
}
