import { createPageType } from '../../common/pagination.js';
import { Agent } from './agent.entity.js';
import { Conversation } from './conversation.entity.js';

export const AgentPage = createPageType(Agent, 'AgentPage');
export const ConversationPage = createPageType(Conversation, 'ConversationPage');
