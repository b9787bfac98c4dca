// Resource bombs of issue 9: 25,000 partitions in one request, 12 partial frames held open,
// 500 connections at once, a frame trickled at one byte a second. See bomb-suite.ts.
import { bombSuite } from './bomb-suite.js';

bombSuite(['create-partitions-25k', 'create-topics-25k', 'partial-frames-12x45m', 'connections-500', 'trickle']);
