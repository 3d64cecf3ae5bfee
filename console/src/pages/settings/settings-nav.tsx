import { Link, useLocation } from 'wouter';

const TABS = [
  { href: '/settings', label: 'API keys' },
  { href: '/settings/webhooks', label: 'Webhooks' },
  { href: '/settings/telephony', label: 'Carriers and numbers' },
  { href: '/settings/team', label: 'Team' },
];

export function SettingsNav() {
  const [location] = useLocation();
  return (
    <nav className="sub-nav" aria-label="Settings">
      <ul>
        {TABS.map((tab) => (
          <li key={tab.href}>
            <Link href={tab.href} aria-current={location === tab.href ? 'page' : undefined}>
              {tab.label}
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  );
}
