import { createPageType } from '../../common/pagination.js';
import { Agent } from './agent.entity.js';
import { Conversation } from './conversation.entity.js';
import { Message } from './message.entity.js';

export const AgentPage = createPageType(Agent, 'AgentPage');
export const ConversationPage = createPageType(Conversation, 'ConversationPage');
export const MessagePage = createPageType(Message, 'MessagePage');
