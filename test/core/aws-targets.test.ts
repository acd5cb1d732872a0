import { describe, expect, it } from 'vitest';
import { parseAwsTarget, parseTargetPatterns, sqsQueueUrl, targetAllowed, targetPatternService } from '../../core/aws-targets.js';
import { loadConfig } from '../../core/config.js';

describe('parseAwsTarget', () => {
  it('an SQS queue ARN: partition, region, account, queue; FIFO by its suffix', () => {
    expect(parseAwsTarget('arn:aws:sqs:eu-west-1:123456789012:orders')).toEqual({
      arn: 'arn:aws:sqs:eu-west-1:123456789012:orders',
      partition: 'aws',
      region: 'eu-west-1',
      account: '123456789012',
      service: 'sqs',
      queueName: 'orders',
      fifo: false,
    });
    expect(parseAwsTarget('arn:aws:sqs:us-east-1:000000000000:in_box-2.fifo')).toMatchObject({ queueName: 'in_box-2.fifo', fifo: true });
    expect(parseAwsTarget(`arn:aws:sqs:us-east-1:000000000000:${'q'.repeat(80)}`)).toMatchObject({ fifo: false });
    expect(parseAwsTarget(`arn:aws:sqs:us-east-1:000000000000:${'q'.repeat(75)}.fifo`)).toMatchObject({ fifo: true });
  });

  it('an EventBridge bus ARN: the name after event-bus/, partner buses included', () => {
    expect(parseAwsTarget('arn:aws:events:eu-central-1:123456789012:event-bus/gateway')).toEqual({
      arn: 'arn:aws:events:eu-central-1:123456789012:event-bus/gateway',
      partition: 'aws',
      region: 'eu-central-1',
      account: '123456789012',
      service: 'events',
      busName: 'gateway',
    });
    expect(parseAwsTarget('arn:aws:events:us-east-1:123456789012:event-bus/default')).toMatchObject({ busName: 'default' });
    expect(parseAwsTarget('arn:aws:events:us-east-1:123456789012:event-bus/aws.partner/acme.com/1/x')).toMatchObject({
      busName: 'aws.partner/acme.com/1/x',
    });
  });

  it('the China and GovCloud partitions with their own regions only', () => {
    expect(parseAwsTarget('arn:aws-cn:sqs:cn-north-1:123456789012:q')).toMatchObject({ partition: 'aws-cn' });
    expect(parseAwsTarget('arn:aws-us-gov:events:us-gov-west-1:123456789012:event-bus/b')).toMatchObject({ partition: 'aws-us-gov' });
    expect(parseAwsTarget('arn:aws:sqs:cn-north-1:123456789012:q')).toBeUndefined();
    expect(parseAwsTarget('arn:aws-cn:sqs:eu-west-1:123456789012:q')).toBeUndefined();
    expect(parseAwsTarget('arn:aws:sqs:us-gov-west-1:123456789012:q')).toBeUndefined();
  });

  it('anything else is no target', () => {
    for (const arn of [
      'arn:aws:sqs:eu-west-1:123456789012',
      'arn:aws:sqs:eu-west-1:12345678901:q',
      'arn:aws:sqs:eu-west-1:1234567890123:q',
      'arn:aws:sqs:EU-WEST-1:123456789012:q',
      'arn:aws:sqs:eu-west:123456789012:q',
      'arn:aws:sqs::123456789012:q',
      'arn:aws:sqs:eu-west-1:123456789012:',
      'arn:aws:sqs:eu-west-1:123456789012:q.txt',
      'arn:aws:sqs:eu-west-1:123456789012:q q',
      'arn:aws:sqs:eu-west-1:123456789012:q:extra',
      `arn:aws:sqs:eu-west-1:123456789012:${'q'.repeat(81)}`,
      `arn:aws:sqs:eu-west-1:123456789012:${'q'.repeat(76)}.fifo`,
      'arn:aws:sqs:eu-west-1:123456789012:orders-*',
      'arn:aws:events:eu-west-1:123456789012:rule/r',
      'arn:aws:events:eu-west-1:123456789012:event-bus/',
      'arn:aws:events:eu-west-1:123456789012:event-bus/a b',
      `arn:aws:events:eu-west-1:123456789012:event-bus/${'b'.repeat(257)}`,
      'arn:aws:sns:eu-west-1:123456789012:topic',
      'arn:aws-iso:sqs:us-iso-east-1:123456789012:q',
      'arn:azure:sqs:eu-west-1:123456789012:q',
      'https://sqs.eu-west-1.amazonaws.com/123456789012/q',
    ]) {
      expect(parseAwsTarget(arn), arn).toBeUndefined();
    }
  });
});

describe('sqsQueueUrl', () => {
  it("the queue's URL in its region (amazonaws.com.cn in China)", () => {
    const url = (arn: string) => {
      const target = parseAwsTarget(arn);
      if (target?.service !== 'sqs') throw new Error(`not a queue: ${arn}`);
      return sqsQueueUrl(target);
    };
    expect(url('arn:aws:sqs:eu-west-1:123456789012:orders.fifo')).toBe('https://sqs.eu-west-1.amazonaws.com/123456789012/orders.fifo');
    expect(url('arn:aws-cn:sqs:cn-north-1:123456789012:q')).toBe('https://sqs.cn-north-1.amazonaws.com.cn/123456789012/q');
    expect(url('arn:aws-us-gov:sqs:us-gov-west-1:123456789012:q')).toBe('https://sqs.us-gov-west-1.amazonaws.com/123456789012/q');
  });
});

describe('EVENT_TARGET_ARNS patterns', () => {
  const patterns = ['arn:aws:sqs:*:123456789012:orders-*', 'arn:aws:events:eu-west-1:123456789012:event-bus/gateway'];

  it('`*` matches any run of characters, the rest exactly', () => {
    expect(targetAllowed('arn:aws:sqs:eu-west-1:123456789012:orders-eu', patterns)).toBe(true);
    expect(targetAllowed('arn:aws:sqs:us-east-2:123456789012:orders-us.fifo', patterns)).toBe(true);
    expect(targetAllowed('arn:aws:sqs:eu-west-1:123456789012:orders-', patterns)).toBe(true);
    expect(targetAllowed('arn:aws:sqs:eu-west-1:123456789012:orders', patterns)).toBe(false);
    expect(targetAllowed('arn:aws:sqs:eu-west-1:210987654321:orders-eu', patterns)).toBe(false);
    expect(targetAllowed('arn:aws:events:eu-west-1:123456789012:event-bus/gateway', patterns)).toBe(true);
    expect(targetAllowed('arn:aws:events:eu-west-1:123456789012:event-bus/gateway2', patterns)).toBe(false);
    expect(targetAllowed('arn:aws:events:eu-west-2:123456789012:event-bus/gateway', patterns)).toBe(false);
    // `.` in a pattern is a dot, not any character.
    expect(targetAllowed('arn:aws:sqs:eu-west-1:123456789012:qXfifo', ['arn:aws:sqs:eu-west-1:123456789012:q.fifo'])).toBe(false);
    expect(targetAllowed('arn:aws:sqs:eu-west-1:123456789012:q', [])).toBe(false);
  });

  it('a pattern names its partition and service literally; a bus pattern names event-bus/', () => {
    expect(targetPatternService('arn:aws:sqs:*:*:*')).toBe('sqs');
    expect(targetPatternService('arn:aws-cn:events:cn-*:123456789012:event-bus/*')).toBe('events');
    for (const pattern of [
      '*',
      'arn:*',
      'arn:aws:*:eu-west-1:123456789012:q',
      'arn:*:sqs:eu-west-1:123456789012:q',
      'arn:aws:events:eu-west-1:123456789012:*',
      'arn:aws:sqs:eu-west-1:123456789012',
      'arn:aws:sqs:eu-west-1:12345:q',
      'arn:aws:sqs:eu-west-1:123456789012:q:x',
      'sqs:eu-west-1:123456789012:q',
    ]) {
      expect(targetPatternService(pattern), pattern).toBeUndefined();
    }
  });

  it('a comma-separated setting: blanks around entries ignored, bad entries named', () => {
    expect(parseTargetPatterns(` ${patterns[0]} ,${patterns[1]},`)).toEqual({ ok: true, patterns });
    expect(parseTargetPatterns('arn:aws:sqs:eu-west-1:123456789012:q, *')).toEqual({ ok: false, invalid: ['*'] });
  });

  it('EVENT_TARGET_ARNS: none when unset; a bad entry fails the config naming it', () => {
    expect(loadConfig({}).EVENT_TARGET_ARNS).toEqual([]);
    expect(loadConfig({ EVENT_TARGET_ARNS: '' }).EVENT_TARGET_ARNS).toEqual([]);
    expect(loadConfig({ EVENT_TARGET_ARNS: patterns.join(',') }).EVENT_TARGET_ARNS).toEqual(patterns);
    expect(() => loadConfig({ EVENT_TARGET_ARNS: 'arn:aws:sqs:eu-west-1:123456789012:q,my-queue' })).toThrow(
      /EVENT_TARGET_ARNS: .*my-queue/,
    );
  });
});
