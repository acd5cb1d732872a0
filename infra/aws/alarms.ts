import { Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import type { OwnedDeadLetterQueue } from './queues.js';

export interface DeadLetterAlarmsProps {
  readonly deadLetterQueues: readonly OwnedDeadLetterQueue[];
  readonly alarmEmail?: string;
}

/**
 * One alarm per dead-letter queue: a single message there is a command that never reached
 * WhatsApp or an event a webhook receiver never got, so the threshold is one.
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
  }
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
