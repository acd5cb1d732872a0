import { Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { METRIC, METRICS_DIMENSION, METRICS_NAMESPACE, METRICS_SERVICE } from '../../core/metric-names.js';
import type { OwnedDeadLetterQueue } from './queues.js';

export interface DeadLetterAlarmsProps {
  readonly deadLetterQueues: readonly OwnedDeadLetterQueue[];
  /** Alarmed when its oldest event waits too long (receivers down, or delivery stuck). */
  readonly webhookQueue: sqs.IQueue;
  readonly alarmEmail?: string;
}

/** Oldest webhook event age that raises the backlog alarm. */
const WEBHOOK_BACKLOG_AGE = Duration.minutes(15);
/** Accounts in `reconnecting` for this long (every minute of it) raise the alarm. */
const RECONNECTING_PERIODS = 15;

/**
 * One alarm per dead-letter queue: a single message there is a command that never reached
 * WhatsApp or an event a webhook receiver never got, so the threshold is one. Plus the
 * operations alarms: the webhook backlog's age (SQS's own metric) and accounts stuck in
 * `reconnecting` (the connectors' EMF metric, connector/metrics/emf.ts).
 */
export class DeadLetterAlarms extends Construct {
  readonly topic: sns.Topic;
  readonly alarms: cloudwatch.Alarm[];

  constructor(scope: Construct, id: string, props: DeadLetterAlarmsProps) {
    super(scope, id);
    this.topic = new sns.Topic(this, 'Topic', { enforceSSL: true });
    // The topic policy written for enforceSSL replaces SNS's default one: allow the alarms back in.
    this.topic.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }),
    );
    if (props.alarmEmail) this.topic.addSubscription(new subscriptions.EmailSubscription(props.alarmEmail));

    this.alarms = props.deadLetterQueues.map(({ label, queue }) => {
      const alarm = new cloudwatch.Alarm(this, `${capitalize(label)}DeadLetterAlarm`, {
        alarmDescription: `Messages in the ${label} dead-letter queue: inspect and redrive them.`,
        metric: queue.metricApproximateNumberOfMessagesVisible({
          period: Duration.minutes(5),
          statistic: cloudwatch.Stats.MAXIMUM,
        }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
      alarm.addAlarmAction(new cloudwatchActions.SnsAction(this.topic));
      return alarm;
    });

    const backlog = new cloudwatch.Alarm(this, 'WebhookBacklogAgeAlarm', {
      alarmDescription: `The oldest webhook event has waited over ${WEBHOOK_BACKLOG_AGE.toMinutes()} minutes: a receiver is down or delivery is stuck.`,
      metric: props.webhookQueue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(5), statistic: cloudwatch.Stats.MAXIMUM }),
      threshold: WEBHOOK_BACKLOG_AGE.toSeconds(),
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    const reconnecting = new cloudwatch.Alarm(this, 'AccountsReconnectingAlarm', {
      alarmDescription: `Accounts have been reconnecting for ${RECONNECTING_PERIODS} minutes: WhatsApp unreachable, or sessions failing.`,
      metric: new cloudwatch.Metric({
        namespace: METRICS_NAMESPACE,
        metricName: METRIC.accountsReconnecting,
        dimensionsMap: { [METRICS_DIMENSION]: METRICS_SERVICE },
        period: Duration.minutes(1),
        statistic: cloudwatch.Stats.MAXIMUM,
      }),
      threshold: 1,
      evaluationPeriods: RECONNECTING_PERIODS,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    for (const alarm of [backlog, reconnecting]) {
      alarm.addAlarmAction(new cloudwatchActions.SnsAction(this.topic));
      this.alarms.push(alarm);
    }
  }
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
